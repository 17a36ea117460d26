package httplw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/transport"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// Config configures a ListerWatcher.
type Config struct {
	// BaseURL is the server's URL, such as "http://127.0.0.1:8080".
	// Required.
	BaseURL string
	// Group, Version and Plural name the resource. Version and Plural are
	// required; Group "" is the core group, served at /api/{version}.
	Group, Version, Plural string
	// Namespace restricts lists and watches to one namespace; "" means all
	// namespaces (or a cluster-scoped resource).
	Namespace string
	// HTTPClient sends the requests; nil means http.DefaultClient. A
	// transport that is not a *transport.Transport is wrapped in one with
	// its defaults (transport.Wrap): a client-side rate limit (a list, each
	// page of it, and each watch start take one token; a watch's events
	// none), and a list answered 429 sent again after its Retry-After
	// within its ctx's deadline (a watch's 429 is returned, for the
	// reflector's backoff). Give the same *transport.Transport to every
	// ListerWatcher and client of one server to share one limit. Its
	// Timeout, if any, also bounds watches, so leave it zero and rely on
	// contexts and timeoutSeconds instead.
	HTTPClient *http.Client
	// NewFunc returns an empty object that watch events decode into with
	// encoding/json; nil means *unstructured.Unstructured.
	NewFunc func() runtime.Object
	// NewListFunc returns an empty list that List decodes into with
	// encoding/json; nil means *unstructured.UnstructuredList.
	NewListFunc func() runtime.Object
}

// ListerWatcher lists and watches one resource of a Kubernetes-compatible
// HTTP API. It is safe for concurrent use.
type ListerWatcher struct {
	cfg    Config
	client *http.Client
	path   string // URL of the collection, without query
}

var _ reflector.ListerWatcher = (*ListerWatcher)(nil)

// New validates cfg and returns a ListerWatcher.
func New(cfg Config) (*ListerWatcher, error) {
	if cfg.Version == "" || cfg.Plural == "" {
		return nil, errors.New("httplw: version and plural are required")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("httplw: base URL %q must be an absolute URL", cfg.BaseURL)
	}
	p := strings.TrimSuffix(base.String(), "/") + "/apis/" + url.PathEscape(cfg.Group) + "/" + url.PathEscape(cfg.Version)
	if cfg.Group == "" {
		p = strings.TrimSuffix(base.String(), "/") + "/api/" + url.PathEscape(cfg.Version)
	}
	if cfg.Namespace != "" {
		p += "/namespaces/" + url.PathEscape(cfg.Namespace)
	}
	p += "/" + url.PathEscape(cfg.Plural)
	return &ListerWatcher{cfg: cfg, client: transport.Wrap(cfg.HTTPClient), path: p}, nil
}

// List implements reflector.ListerWatcher. Non-2xx answers are returned as
// *storage.Error (or *apierrors.StatusError) built from the server's Status
// body.
func (l *ListerWatcher) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Watch = false
	resp, err := l.do(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("httplw: reading list of %s: %w", l.cfg.Plural, err)
	}
	var list runtime.Object
	if l.cfg.NewListFunc != nil {
		list = l.cfg.NewListFunc()
		err = utiljson.Unmarshal(body, list)
	} else {
		u := &unstructured.UnstructuredList{}
		list = u
		err = u.UnmarshalJSON(body)
	}
	if err != nil {
		return nil, fmt.Errorf("httplw: decoding list of %s: %w", l.cfg.Plural, err)
	}
	return list, nil
}

// Watch implements reflector.ListerWatcher. The returned watch owns one
// goroutine decoding the stream; Stop, the end of ctx, or the end of the
// stream ends it, closes the response body and then the result channel.
// ERROR events from the server arrive as watch.Error with a *metav1.Status.
func (l *ListerWatcher) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	ctx, cancel := context.WithCancel(ctx)
	resp, err := l.do(ctx, opts)
	if err != nil {
		cancel()
		return nil, err
	}
	return newStreamWatcher(ctx, cancel, resp.Body, l.decodeObject), nil
}

// do sends the GET for opts and turns a non-2xx answer into an API error.
func (l *ListerWatcher) do(ctx context.Context, opts metav1.ListOptions) (*http.Response, error) {
	u := l.path
	if q := EncodeListOptions(opts).Encode(); q != "" {
		u += "?" + q
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("httplw: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := l.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, ErrorFromResponse(resp, l.gr())
	}
	return resp, nil
}

func (l *ListerWatcher) gr() schema.GroupResource {
	return schema.GroupResource{Group: l.cfg.Group, Resource: l.cfg.Plural}
}

// decodeObject decodes one watch event object.
func (l *ListerWatcher) decodeObject(data []byte) (runtime.Object, error) {
	if l.cfg.NewFunc != nil {
		obj := l.cfg.NewFunc()
		return obj, utiljson.Unmarshal(data, obj)
	}
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(data)
}

// ErrorFromResponse reads resp's Status body and returns the error it
// stands for (storage.FromStatus: a *storage.Error for a storage error's
// Status); a body that is not a Status gives the generic Status for the
// HTTP code. gr names the resource in that generic Status. The caller
// closes the body.
func ErrorFromResponse(resp *http.Response, gr schema.GroupResource) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var st metav1.Status
	if err := utiljson.Unmarshal(body, &st); err == nil && st.Kind == "Status" && st.Code != 0 {
		return storage.FromStatus(&st)
	}
	var retry int
	if d, ok := transport.RetryAfter(resp, time.Now()); ok {
		retry = int((d + time.Second - 1) / time.Second)
	}
	st = apierrors.NewGenericServerResponse(resp.StatusCode, resp.Request.Method, gr, "", string(body), retry, true).ErrStatus
	return storage.FromStatus(&st)
}
