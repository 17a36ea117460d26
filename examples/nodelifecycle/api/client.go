package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/reflector"
)

// Client writes and reads typed objects through the HTTP API. Errors from
// the server are *apierrors.StatusError, so apierrors.IsNotFound and
// IsConflict work on them.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the server at baseURL; hc nil means
// http.DefaultClient.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), hc: hc}
}

// BaseURL returns the server's URL.
func (c *Client) BaseURL() string { return c.base }

// HTTPClient returns the HTTP client requests go through.
func (c *Client) HTTPClient() *http.Client { return c.hc }

// Create creates obj (its kind and version are set from k) and decodes the
// stored object back into it.
func (c *Client) Create(ctx context.Context, k Kind, obj reflector.Object) error {
	obj.GetObjectKind().SetGroupVersionKind(k.GroupVersionKind())
	return c.do(ctx, http.MethodPost, k, k.path(obj.GetNamespace(), ""), obj, obj)
}

// Update replaces obj, which must carry the resourceVersion it was read at
// (a conflict otherwise), and decodes the stored object back into it.
func (c *Client) Update(ctx context.Context, k Kind, obj reflector.Object) error {
	obj.GetObjectKind().SetGroupVersionKind(k.GroupVersionKind())
	return c.do(ctx, http.MethodPut, k, k.path(obj.GetNamespace(), obj.GetName()), obj, obj)
}

// UpdateStatus replaces obj's status through its /status subresource
// (metadata.resourceVersion, when set, is a precondition) and decodes the
// stored object back into it.
func (c *Client) UpdateStatus(ctx context.Context, k Kind, obj reflector.Object) error {
	obj.GetObjectKind().SetGroupVersionKind(k.GroupVersionKind())
	return c.do(ctx, http.MethodPut, k, k.path(obj.GetNamespace(), obj.GetName())+"/status", obj, obj)
}

// Patch sends a patch of patchType (such as types.MergePatchType) to
// ns/name, or to its subresource when sub is not "", and decodes the
// stored object into out (when not nil).
func (c *Client) Patch(ctx context.Context, k Kind, ns, name, sub string, patchType types.PatchType, patch []byte, out any) error {
	p := k.path(ns, name)
	if sub != "" {
		p += "/" + sub
	}
	return c.send(ctx, http.MethodPatch, k, p, string(patchType), bytes.NewReader(patch), out)
}

// DeleteWith deletes ns/name with opts (preconditions, propagation).
func (c *Client) DeleteWith(ctx context.Context, k Kind, ns, name string, opts metav1.DeleteOptions) error {
	opts.Kind, opts.APIVersion = "DeleteOptions", "v1"
	return c.do(ctx, http.MethodDelete, k, k.path(ns, name), &opts, nil)
}

// Get reads ns/name into into.
func (c *Client) Get(ctx context.Context, k Kind, ns, name string, into reflector.Object) error {
	return c.do(ctx, http.MethodGet, k, k.path(ns, name), nil, into)
}

// List reads every object of k in namespace ns ("": all) into into (a
// list type, such as *corev1.PodList): a consistent read.
func (c *Client) List(ctx context.Context, k Kind, ns string, into any) error {
	return c.do(ctx, http.MethodGet, k, k.path(ns, ""), nil, into)
}

// Delete deletes ns/name.
func (c *Client) Delete(ctx context.Context, k Kind, ns, name string) error {
	return c.do(ctx, http.MethodDelete, k, k.path(ns, name), nil, nil)
}

// do sends one request with body encoded as JSON (none when nil) and
// decodes a successful answer into out (when not nil).
func (c *Client) do(ctx context.Context, method string, k Kind, path string, body, out any) error {
	var r io.Reader
	contentType := ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("api: encoding %s: %w", k.Kind, err)
		}
		r, contentType = bytes.NewReader(b), "application/json"
	}
	return c.send(ctx, method, k, path, contentType, r, out)
}

// send sends one request with body r of contentType (none when r is nil)
// and decodes a successful answer into out (when not nil).
func (c *Client) send(ctx context.Context, method string, k Kind, path, contentType string, r io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return fmt.Errorf("api: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if r != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("api: reading %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var st metav1.Status
		if json.Unmarshal(data, &st) == nil && st.Kind == "Status" && st.Code != 0 {
			return apierrors.FromObject(&st)
		}
		return apierrors.NewGenericServerResponse(resp.StatusCode, method,
			schema.GroupResource{Group: k.Group, Resource: k.Plural}, "", string(data), 0, false)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("api: decoding %s: %w", k.Kind, err)
	}
	return nil
}

// Mutate reads ns/name, applies mutate and writes the result back when
// mutate reports a change, retrying on conflicts with a fresh read. It
// returns the object as stored (or as read, when nothing changed).
func Mutate[T reflector.Object](ctx context.Context, c *Client, k Kind, ns, name string, newObj func() T,
	mutate func(T) (changed bool, err error)) (T, error) {
	for {
		obj := newObj()
		if err := c.Get(ctx, k, ns, name, obj); err != nil {
			return obj, err
		}
		changed, err := mutate(obj)
		if err != nil || !changed {
			return obj, err
		}
		err = c.Update(ctx, k, obj)
		if apierrors.IsConflict(err) && ctx.Err() == nil {
			continue
		}
		return obj, err
	}
}
