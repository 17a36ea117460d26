package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
)

func runWatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("watch", stderr)
	serverURL := fs.String("server", "", "base URL of a cacher-demo serve (required)")
	ns := fs.String("namespace", "", "namespace to watch (default: all)")
	rv := fs.String("resource-version", "", "resource version to start from (default: list first)")
	labelSel := fs.String("selector", "", "label selector")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if u, err := url.Parse(*serverURL); *serverURL == "" || err != nil || u.Host == "" {
		return fmt.Errorf("%w: --server URL is required (for example http://127.0.0.1:8080)", errUsage)
	}
	if _, err := selectorPredicate(*labelSel, ""); err != nil {
		return fmt.Errorf("%w: bad --selector: %v", errUsage, err)
	}
	lw, err := httplw.New(httplw.Config{BaseURL: *serverURL, Group: group, Version: version, Plural: plural, Namespace: *ns})
	if err != nil {
		return err
	}
	p := &eventPrinter{out: stdout}
	inf, err := reflector.NewSharedIndexInformer[*unstructured.Unstructured](
		withWatchOptions(lw, *rv, *labelSel),
		reflector.WithName("widgets"),
		reflector.WithWatchErrorHandler(p.watchError))
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
	inf.Run(ctx)
	return nil
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
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		fmt.Fprintf(p.out, "410 Gone (%v): relisting\n", err)
	default:
		fmt.Fprintf(p.out, "watch interrupted (%v): resuming from the last RV\n", err)
	}
}
