package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/storage"
)

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("watch", stderr)
	serverURL := fs.String("server", "", "base URL of a cacher-demo serve (required)")
	ns := fs.String("namespace", "", "namespace to watch (default: all)")
	rv := fs.String("resource-version", "", "resource version to start from (default: list first)")
	labelSel := fs.String("selector", "", "label selector")
	caFile := fs.String("certificate-authority", "", "PEM file of the CA that signed the server's certificate (an https --server)")
	token := fs.String("token", "", "bearer token sent with every request")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if u, err := url.Parse(*serverURL); *serverURL == "" || err != nil || u.Host == "" {
		return fmt.Errorf("%w: --server URL is required (for example http://127.0.0.1:8080)", errUsage)
	}
	if _, err := selectorPredicate(*labelSel, ""); err != nil {
		return fmt.Errorf("%w: bad --selector: %v", errUsage, err)
	}
	client, err := watchClient(*caFile, *token)
	if err != nil {
		return err
	}
	lw, err := httplw.New(httplw.Config{BaseURL: *serverURL, Group: group, Version: version, Plural: plural, Namespace: *ns,
		HTTPClient: client})
	if err != nil {
		return err
	}
	p := &eventPrinter{out: stdout}
	factory := reflector.NewInformerFactory(reflector.WithWatchErrorHandler(p.watchError))
	inf, err := reflector.InformerFor[*unstructured.Unstructured](factory,
		schema.GroupVersionResource{Group: group, Version: version, Resource: plural}, withWatchOptions(lw, *rv, *labelSel))
	if err != nil {
		return err
	}
	if _, err := inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(o *unstructured.Unstructured, initial bool) { p.event("ADDED", o, initial) },
		UpdateFunc: func(_, o *unstructured.Unstructured) { p.event("MODIFIED", o, false) },
		DeleteFunc: func(o *unstructured.Unstructured, unknown bool) { p.deleted(o, unknown) },
	}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "watching %s (namespace %q)\n", *serverURL, *ns)
	factory.Start(ctx)
	<-ctx.Done()
	factory.Shutdown()
	return nil
}

// watchClient is the HTTP client of watch: trusting caFile's CAs (the
// system's without one) and sending token as a bearer token when given.
// A CA file that cannot be read is a usage error, not a retry loop.
func watchClient(caFile, token string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pool, err := loadPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: --certificate-authority: %v", errUsage, err)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = tr
	if token != "" {
		rt = bearer{token: token, next: tr}
	}
	return &http.Client{Transport: rt}, nil
}

// bearer adds an Authorization: Bearer header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(req)
}

// eventPrinter prints informer events and the reflector's recoveries.
type eventPrinter struct {
	mu  sync.Mutex
	out io.Writer
}

func (p *eventPrinter) event(typ string, o *unstructured.Unstructured, initial bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	suffix := ""
	if initial {
		suffix = " (initial list)"
	}
	fmt.Fprintf(p.out, "%-8s %s/%s rv=%s%s\n", typ, o.GetNamespace(), o.GetName(), o.GetResourceVersion(), suffix)
}

func (p *eventPrinter) deleted(o *unstructured.Unstructured, unknown bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if unknown {
		fmt.Fprintf(p.out, "DELETED  %s/%s (noticed on relist; final state unknown)\n", o.GetNamespace(), o.GetName())
		return
	}
	fmt.Fprintf(p.out, "DELETED  %s/%s rv=%s\n", o.GetNamespace(), o.GetName(), o.GetResourceVersion())
}

func (p *eventPrinter) watchError(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case errors.Is(err, storage.ErrGone):
		fmt.Fprintf(p.out, "410 Gone (%v): relisting\n", err)
	default:
		fmt.Fprintf(p.out, "watch interrupted (%v): resuming from the last RV\n", err)
	}
}
