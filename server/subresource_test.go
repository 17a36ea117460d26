package server

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/wire"
)

// withSubresources declares /status and /scale on the fixture's widgets,
// as cacher-demo does.
func withSubresources(cfg *Config) {
	withWidgetSchema(cfg)
	cfg.Resources[0].Subresources = &Subresources{Status: true,
		Scale: &ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}}
}

// TestStatusSubresource: with a status subresource, writes to the object
// keep the stored status and writes to /status change only status, as
// for a CRD.
func TestStatusSubresource(t *testing.T) {
	f := newFixture(t, withSubresources)
	coll := apiBase + "/namespaces/default/widgets"
	r := f.do(http.MethodPost, coll, "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":1},"status":{"replicas":9}}`)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.NotContains(t, r.object(t).Object, "status", "status is dropped on create")

	r = f.do(http.MethodPut, coll+"/w1/status", "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":5},"status":{"replicas":1}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	u := r.object(t)
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	require.Equal(t, int64(1), replicas, "a /status write does not change spec")
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "replicas")
	require.Equal(t, int64(1), observed)
	require.Equal(t, int64(1), u.GetGeneration())

	r = f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"spec":{"replicas":2},"status":{"replicas":7}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	u = r.object(t)
	observed, _, _ = unstructured.NestedInt64(u.Object, "status", "replicas")
	require.Equal(t, int64(1), observed, "a write of the object does not change status")
	require.Equal(t, int64(2), u.GetGeneration())

	r = f.do(http.MethodPatch, coll+"/w1/status", wire.MediaMergePatch, `{"status":{"replicas":2}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	r = f.do(http.MethodGet, coll+"/w1/status", "", nil)
	require.Equal(t, http.StatusOK, r.code)
	observed, _, _ = unstructured.NestedInt64(r.object(t).Object, "status", "replicas")
	require.Equal(t, int64(2), observed)
	f.do(http.MethodPut, coll+"/missing/status", "application/json", `{"metadata":{"name":"missing"}}`).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	f.do(http.MethodGet, coll+"/w1/bogus", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

// TestScaleSubresource: /scale reads and writes an autoscaling/v1 Scale
// mapped on spec.replicas and status.replicas; discovery lists it.
func TestScaleSubresource(t *testing.T) {
	f := newFixture(t, withSubresources)
	coll := apiBase + "/namespaces/default/widgets"
	w := f.do(http.MethodPost, coll, "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":1}}`).object(t)

	r := f.do(http.MethodGet, coll+"/w1/scale", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	sc := r.object(t)
	require.Equal(t, "autoscaling/v1", sc.GetAPIVersion())
	require.Equal(t, "Scale", sc.GetKind())
	require.Equal(t, w.GetResourceVersion(), sc.GetResourceVersion())
	n, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas")
	require.Equal(t, int64(1), n)

	r = f.do(http.MethodPatch, coll+"/w1/scale", wire.MediaMergePatch, `{"spec":{"replicas":3}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	n, _, _ = unstructured.NestedInt64(r.object(t).Object, "spec", "replicas")
	require.Equal(t, int64(3), n)
	got := f.do(http.MethodGet, coll+"/w1", "", nil).object(t)
	n, _, _ = unstructured.NestedInt64(got.Object, "spec", "replicas")
	require.Equal(t, int64(3), n)
	require.Equal(t, int64(2), got.GetGeneration())

	stale := `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w1","resourceVersion":"` + w.GetResourceVersion() + `"},"spec":{"replicas":4}}`
	f.do(http.MethodPut, coll+"/w1/scale", "application/json", stale).status(t, http.StatusConflict, metav1.StatusReasonConflict)
	f.do(http.MethodPut, coll+"/w1/scale", "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":-1}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	r = f.do(http.MethodPut, coll+"/w1/scale", "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":4}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))

	var list metav1.APIResourceList
	r = f.do(http.MethodGet, apiBase, "", nil)
	require.NoError(t, json.Unmarshal(r.body, &list))
	names := map[string]metav1.APIResource{}
	for _, res := range list.APIResources {
		names[res.Name] = res
	}
	require.Equal(t, "Scale", names["widgets/scale"].Kind)
	require.Equal(t, "autoscaling", names["widgets/scale"].Group)
	require.Equal(t, "Widget", names["widgets/status"].Kind)
}

// TestScaleIsKubernetesScale: /scale takes an autoscaling/v1 Scale only:
// replicas beyond an int32 and a body of another kind are 400 and change
// nothing; subresources have no watch (405).
func TestScaleIsKubernetesScale(t *testing.T) {
	f := newFixture(t, withSubresources)
	coll := apiBase + "/namespaces/default/widgets"
	w := f.do(http.MethodPost, coll, "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":1}}`).object(t)
	for _, c := range []struct{ method, ctype, body string }{
		{http.MethodPut, "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"w1"},"spec":{"replicas":2147483648}}`},
		{http.MethodPatch, wire.MediaMergePatch, `{"spec":{"replicas":2147483648}}`},
		{http.MethodPut, "application/json", `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":2}}`},
		{http.MethodPut, "application/json", `{"apiVersion":"autoscaling/v1","kind":"Deployment","metadata":{"name":"w1"},"spec":{"replicas":2}}`},
		{http.MethodPatch, wire.MediaMergePatch, `{"kind":"Widget","spec":{"replicas":2}}`},
	} {
		f.do(c.method, coll+"/w1/scale", c.ctype, c.body).status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	}
	r := f.do(http.MethodPut, coll+"/w1/scale", "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":2147483647}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.NotEqual(t, w.GetResourceVersion(), r.object(t).GetResourceVersion())
	for _, sub := range []string{"scale", "status"} {
		f.do(http.MethodGet, coll+"/w1/"+sub+"?watch=true", "", nil).status(t, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed)
	}
}

// TestKubectlScaleCurrentReplicas: kubectl scale --current-replicas sends
// its Scale without a Content-Type; it is read as JSON, and the
// precondition holds.
func TestKubectlScaleCurrentReplicas(t *testing.T) {
	f := newFixture(t, withSubresources)
	k := newKubectl(t, f)
	f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", `{"metadata":{"name":"w1"},"spec":{"replicas":1}}`)
	require.Equal(t, "widget.demo.listwatch.dev/w1 scaled",
		k.must("", "scale", "widget", "w1", "-n", "default", "--current-replicas=1", "--replicas=3"))
	require.Equal(t, "3", k.must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))
	_, err := k.run("", "scale", "widget", "w1", "-n", "default", "--current-replicas=1", "--replicas=5")
	require.Error(t, err, "a stale --current-replicas is refused")
	require.Equal(t, "3", k.must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))
}

// TestSubresourceAuthorization: the Authorizer is told the subresource.
func TestSubresourceAuthorization(t *testing.T) {
	f := newFixture(t, withSubresources, func(c *Config) {
		c.Authorizer = auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (bool, string, error) {
			return a.Subresource != subScale, "", nil
		})
	})
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "w1", nil, "")
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, coll+"/w1/status", "", nil).code)
	st := f.do(http.MethodGet, coll+"/w1/scale", "", nil).status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Contains(t, st.Message, `cannot get resource "widgets/scale"`)
}

// TestKubectlWire drives the wire details of issue 24 with the real
// kubectl: scale, create -f of a YAML file, get -o yaml, delete --all.
func TestKubectlWire(t *testing.T) {
	f := newFixture(t, withSubresources)
	k := newKubectl(t, f)
	file := filepath.Join(t.TempDir(), "w.yaml")
	require.NoError(t, os.WriteFile(file, []byte("apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  replicas: 1\n---\napiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w2\n  namespace: default\nspec:\n  replicas: 1\n"), 0o600))
	require.Contains(t, k.must("", "create", "-f", file), "widget.demo.listwatch.dev/w2 created")
	require.Equal(t, "widget.demo.listwatch.dev/w1 scaled", k.must("", "scale", "widget", "w1", "-n", "default", "--replicas=3"))
	require.Equal(t, "3", k.must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))
	out := k.must("", "get", "widget", "w1", "-n", "default", "-o", "yaml")
	require.Contains(t, out, "kind: Widget\n")
	require.Contains(t, out, "spec:\n  replicas: 3")
	out = k.must("", "delete", "widgets", "--all", "-n", "default")
	require.Contains(t, out, `"w1" deleted`)
	require.Contains(t, out, `"w2" deleted`)
	require.Equal(t, "", k.must("", "get", "widgets", "-n", "default", "-o", "name"))
	v := k.must("", "version", "-o", "json")
	require.NotContains(t, v, `"gitVersion": "v0.0.0`)
}
