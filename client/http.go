package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/transport"
)

// maxResponseBody bounds how much of an answer the HTTP client reads.
const maxResponseBody = 256 << 20

// HTTPConfig configures NewHTTP.
type HTTPConfig struct {
	// BaseURL is the server's URL, such as "http://127.0.0.1:8080".
	// Required.
	BaseURL string
	// Kinds resolves objects to kinds and their resources. Required.
	Kinds *Kinds
	// HTTPClient sends the requests; nil means http.DefaultClient. A
	// transport that is not a *transport.Transport is wrapped in one with
	// its defaults (transport.Wrap): a client-side rate limit of
	// transport.DefaultQPS (Burst transport.DefaultBurst), and a 429 sent
	// again after its Retry-After. Give it a *transport.Transport to choose
	// the limit, or to share it with the ListerWatchers (httplw) of the
	// same server. Give every call a ctx with a deadline: a call whose turn
	// under the rate limit would come after it fails at once with a
	// *transport.ThrottleError.
	HTTPClient *http.Client
}

// NewHTTP returns a Client of a Kubernetes-compatible HTTP API (`cacher-demo
// serve`, or a Kubernetes API server): JSON over
// /apis/{group}/{version}[/namespaces/{ns}]/{resource}[/{name}[/status]].
// Error answers become the same errors the in-process client returns
// (storage.FromStatus), so IsNotFound, IsConflict, ... hold alike. Requests
// go through a package transport Transport: rate-limited on the client, and
// a 429 Too Many Requests sent again after its Retry-After, a bounded number
// of times, before it becomes an error.
func NewHTTP(cfg HTTPConfig) (Client, error) {
	if cfg.Kinds == nil {
		return nil, errors.New("client: HTTPConfig.Kinds is required")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be an absolute URL", cfg.BaseURL)
	}
	cfg.HTTPClient = transport.Wrap(cfg.HTTPClient)
	return &httpClient{cfg: cfg, base: strings.TrimSuffix(base.String(), "/")}, nil
}

type httpClient struct {
	cfg  HTTPConfig
	base string
}

func (c *httpClient) Kinds() *Kinds { return c.cfg.Kinds }

func (c *httpClient) Status() StatusWriter { return httpStatus{c} }

// path returns the URL path of kind's collection in namespace, or of the
// object name (and subresource) when name is set; a namespace for a
// cluster-scoped kind is an error (Kind.CheckNamespace).
func (c *httpClient) path(kind Kind, namespace, name, sub string) (string, error) {
	if err := kind.CheckNamespace(namespace); err != nil {
		return "", err
	}
	gv := kind.GroupVersionKind.GroupVersion()
	p := c.base + "/apis/" + url.PathEscape(gv.Group) + "/" + url.PathEscape(gv.Version)
	if gv.Group == "" {
		p = c.base + "/api/" + url.PathEscape(gv.Version)
	}
	if kind.Namespaced && namespace != "" {
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	p += "/" + url.PathEscape(kind.Resource)
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	if sub != "" {
		p += "/" + sub
	}
	return p, nil
}

// do sends one request and decodes a 2xx answer into out (when not nil);
// other answers are returned as the errors they stand for.
func (c *httpClient) do(ctx context.Context, kind Kind, method, u string, query url.Values, contentType string, body any, out runtime.Object) error {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("client: encoding the request body: %w", err)
		}
		rd = bytes.NewReader(data)
	}
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return httplw.ErrorFromResponse(resp, kind.GroupVersionResource().GroupResource())
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil {
		return fmt.Errorf("client: reading the answer to %s %s: %w", method, u, err)
	}
	if err := decodeInto(data, out); err != nil {
		return fmt.Errorf("client: decoding the answer to %s %s: %w", method, u, err)
	}
	return nil
}

// decodeInto replaces *out with the JSON object data.
func decodeInto(data []byte, out runtime.Object) error {
	if u, ok := out.(runtime.Unstructured); ok {
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			return err
		}
		u.SetUnstructuredContent(m)
		return nil
	}
	fresh, err := newOf(out)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, fresh); err != nil {
		return err
	}
	return copyInto(out, fresh)
}

func dryRunQuery(dryRun bool) url.Values {
	if !dryRun {
		return nil
	}
	return url.Values{"dryRun": {"All"}}
}

func (c *httpClient) Get(ctx context.Context, key ObjectKey, obj Object, _ ...GetOption) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	u, err := c.path(kind, key.Namespace, key.Name, "")
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodGet, u, nil, "", nil, obj)
}

func (c *httpClient) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	kind, err := c.cfg.Kinds.KindFor(list)
	if err != nil {
		return err
	}
	o := collect(opts, ListOption.ApplyToList)
	u, err := c.path(kind, o.Namespace, "", "")
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodGet, u, httplw.EncodeListOptions(o.asMeta()), "", nil, list)
}

func (c *httpClient) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	setTypeMeta(kind, obj)
	u, err := c.path(kind, obj.GetNamespace(), "", "")
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodPost, u,
		dryRunQuery(collect(opts, CreateOption.ApplyToCreate).DryRun), runtime.ContentTypeJSON, obj, obj)
}

func (c *httpClient) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return c.put(ctx, obj, "", collect(opts, UpdateOption.ApplyToUpdate))
}

func (c *httpClient) put(ctx context.Context, obj Object, sub string, o UpdateOptions) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	setTypeMeta(kind, obj)
	u, err := c.path(kind, obj.GetNamespace(), obj.GetName(), sub)
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodPut, u,
		dryRunQuery(o.DryRun), runtime.ContentTypeJSON, obj, obj)
}

func (c *httpClient) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return c.patch(ctx, obj, "", patch, collect(opts, PatchOption.ApplyToPatch))
}

func (c *httpClient) patch(ctx context.Context, obj Object, sub string, patch Patch, o PatchOptions) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	u, err := c.path(kind, obj.GetNamespace(), obj.GetName(), sub)
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodPatch, u,
		dryRunQuery(o.DryRun), string(patch.Type()), data, obj)
}

// deleteBody is the metav1.DeleteOptions of o.
func deleteBody(o DeleteOptions) *metav1.DeleteOptions {
	body := &metav1.DeleteOptions{
		TypeMeta:          metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"},
		Preconditions:     o.Preconditions,
		PropagationPolicy: o.PropagationPolicy,
	}
	if o.DryRun {
		body.DryRun = []string{metav1.DryRunAll}
	}
	return body
}

func (c *httpClient) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	u, err := c.path(kind, obj.GetNamespace(), obj.GetName(), "")
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodDelete, u,
		nil, runtime.ContentTypeJSON, deleteBody(collect(opts, DeleteOption.ApplyToDelete)), nil)
}

func (c *httpClient) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return err
	}
	o := collect(opts, DeleteAllOfOption.ApplyToDeleteAllOf)
	u, err := c.path(kind, o.Namespace, "", "")
	if err != nil {
		return err
	}
	return c.do(ctx, kind, http.MethodDelete, u,
		httplw.EncodeListOptions(o.ListOptions.asMeta()), runtime.ContentTypeJSON, deleteBody(o.DeleteOptions), nil)
}

// httpStatus writes /status.
type httpStatus struct{ c *httpClient }

func (w httpStatus) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return w.c.put(ctx, obj, "status", collect(opts, UpdateOption.ApplyToUpdate))
}

func (w httpStatus) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	return w.c.patch(ctx, obj, "status", patch, collect(opts, PatchOption.ApplyToPatch))
}

// setTypeMeta sets obj's apiVersion and kind, which a server needs in a
// request body.
func setTypeMeta(kind Kind, obj Object) {
	obj.GetObjectKind().SetGroupVersionKind(kind.GroupVersionKind)
}
