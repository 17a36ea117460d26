package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// apiClient makes the demo's writes through the HTTP API.
type apiClient struct {
	baseURL string
	http    *http.Client
}

func (c *apiClient) collectionURL(ns string) string {
	return fmt.Sprintf("%s/apis/%s/%s/namespaces/%s/%s", c.baseURL, group, version, ns, plural)
}

// create posts a Widget and returns the stored object.
func (c *apiClient) create(ctx context.Context, ns, name string, spec map[string]any) (*unstructured.Unstructured, error) {
	obj := map[string]any{
		"apiVersion": group + "/" + version, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}
	return c.do(ctx, http.MethodPost, c.collectionURL(ns), "application/json", obj)
}

// patch merge-patches a Widget's spec.
func (c *apiClient) patch(ctx context.Context, ns, name string, spec map[string]any) (*unstructured.Unstructured, error) {
	return c.do(ctx, http.MethodPatch, c.collectionURL(ns)+"/"+name, "application/merge-patch+json",
		map[string]any{"spec": spec})
}

// remove deletes a Widget and returns its last state.
func (c *apiClient) remove(ctx context.Context, ns, name string) (*unstructured.Unstructured, error) {
	return c.do(ctx, http.MethodDelete, c.collectionURL(ns)+"/"+name, "", nil)
}

func (c *apiClient) do(ctx context.Context, method, url, contentType string, body any) (*unstructured.Unstructured, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var st metav1.Status
		if json.Unmarshal(data, &st) == nil && st.Message != "" {
			return nil, fmt.Errorf("%s %s: %d %s: %s", method, url, resp.StatusCode, st.Reason, st.Message)
		}
		return nil, fmt.Errorf("%s %s: HTTP %d", method, url, resp.StatusCode)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, fmt.Errorf("decoding answer of %s %s: %w", method, url, err)
	}
	return u, nil
}
