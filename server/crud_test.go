package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

func TestCreateGetUpdatePatchDelete(t *testing.T) {
	f := newFixture(t)
	created := f.create("default", "w1", map[string]string{"app": "a"}, "node-1")
	require.Equal(t, "demo.listwatch.dev/v1", created.GetAPIVersion())
	require.Equal(t, "Widget", created.GetKind())
	require.NotEmpty(t, created.GetUID())
	require.NotEmpty(t, created.GetResourceVersion())
	ts := created.GetCreationTimestamp()
	require.False(t, ts.IsZero())
	require.Equal(t, int64(1), created.GetGeneration())

	got := f.do(http.MethodGet, apiBase+"/namespaces/default/widgets/w1", "", nil)
	require.Equal(t, http.StatusOK, got.code)
	require.Equal(t, created.Object, got.object(t).Object)

	// PUT with the current RV: generation grows because spec changed.
	next := created.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(next.Object, "node-2", "spec", "nodeName"))
	next.SetUID("")
	upd := f.do(http.MethodPut, apiBase+"/namespaces/default/widgets/w1", "application/json", next.Object)
	require.Equal(t, http.StatusOK, upd.code, string(upd.body))
	updated := upd.object(t)
	require.Equal(t, int64(2), updated.GetGeneration())
	require.Equal(t, created.GetUID(), updated.GetUID())
	require.Equal(t, created.GetCreationTimestamp(), updated.GetCreationTimestamp())
	require.NotEqual(t, created.GetResourceVersion(), updated.GetResourceVersion())

	// PUT with the old RV: 409 Conflict.
	f.do(http.MethodPut, apiBase+"/namespaces/default/widgets/w1", "application/json", next.Object).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)

	// Labels only: generation unchanged. null removes a member.
	patch := `{"metadata":{"labels":{"app":null,"tier":"t1"}},"spec":{"extra":{"x":1}}}`
	p := f.do(http.MethodPatch, apiBase+"/namespaces/default/widgets/w1", "application/merge-patch+json", patch)
	require.Equal(t, http.StatusOK, p.code, string(p.body))
	patched := p.object(t)
	require.Equal(t, map[string]string{"tier": "t1"}, patched.GetLabels())
	x, _, _ := unstructured.NestedInt64(patched.Object, "spec", "extra", "x")
	require.Equal(t, int64(1), x)
	node, _, _ := unstructured.NestedString(patched.Object, "spec", "nodeName")
	require.Equal(t, "node-2", node)
	require.Equal(t, int64(3), patched.GetGeneration())

	// A stale resourceVersion in a patch is a precondition: 409.
	stale := `{"metadata":{"resourceVersion":"` + updated.GetResourceVersion() + `"},"spec":{"y":2}}`
	f.do(http.MethodPatch, apiBase+"/namespaces/default/widgets/w1", "application/merge-patch+json", stale).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)

	// Delete with a wrong uid precondition: 409; with the right one: 200.
	f.do(http.MethodDelete, apiBase+"/namespaces/default/widgets/w1", "application/json",
		`{"preconditions":{"uid":"not-the-uid"}}`).status(t, http.StatusConflict, metav1.StatusReasonConflict)
	del := f.do(http.MethodDelete, apiBase+"/namespaces/default/widgets/w1", "application/json",
		`{"preconditions":{"uid":"`+string(created.GetUID())+`","resourceVersion":"`+patched.GetResourceVersion()+`"}}`)
	require.Equal(t, http.StatusOK, del.code, string(del.body))
	require.Equal(t, "w1", del.object(t).GetName())
	st := f.do(http.MethodGet, apiBase+"/namespaces/default/widgets/w1", "", nil).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	require.Equal(t, "w1", st.Details.Name)
	require.Equal(t, "widgets", st.Details.Kind)
	f.do(http.MethodDelete, apiBase+"/namespaces/default/widgets/w1", "", nil).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

func TestUnconditionalUpdateAndNotFound(t *testing.T) {
	f := newFixture(t)
	f.create("default", "w1", nil, "")
	body := testWidget("default", "", nil, "n9") // name taken from the URL
	r := f.do(http.MethodPut, apiBase+"/namespaces/default/widgets/w1", "application/json", body)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Equal(t, "w1", r.object(t).GetName())
	f.do(http.MethodPut, apiBase+"/namespaces/default/widgets/missing", "application/json", testWidget("default", "missing", nil, "")).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	f.do(http.MethodPatch, apiBase+"/namespaces/default/widgets/missing", "application/merge-patch+json", `{}`).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

func TestGenerateNameAndClusterScoped(t *testing.T) {
	f := newFixture(t)
	body := testWidget("default", "", nil, "")
	body["metadata"].(map[string]any)["generateName"] = "gen-"
	r := f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", body)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.True(t, strings.HasPrefix(r.object(t).GetName(), "gen-"))

	// Cluster-scoped: a namespace in the body is dropped; kind and
	// apiVersion are filled in.
	g := f.do(http.MethodPost, apiBase+"/gadgets", "application/json",
		`{"metadata":{"name":"g1","namespace":"ignored"},"color":"red"}`)
	require.Equal(t, http.StatusCreated, g.code, string(g.body))
	obj := g.object(t)
	require.Equal(t, "", obj.GetNamespace())
	require.Equal(t, "Gadget", obj.GetKind())
	require.Equal(t, "red", obj.Object["color"])
	got := f.do(http.MethodGet, apiBase+"/gadgets/g1", "", nil)
	require.Equal(t, http.StatusOK, got.code)
	l := f.do(http.MethodGet, apiBase+"/gadgets", "", nil).list(t)
	require.Len(t, l.Items, 1)
	require.Equal(t, "GadgetList", l.GetKind())
	f.do(http.MethodGet, apiBase+"/namespaces/default/gadgets/g1", "", nil).
		status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

// TestStatusCodes provokes every error status the API returns.
func TestStatusCodes(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.MaxRequestBodyBytes = 4096 })
	w1 := f.create("default", "w1", nil, "")
	coll := apiBase + "/namespaces/default/widgets"
	item := coll + "/w1"
	cases := []struct {
		name, method, path, ctype string
		body                      any
		code                      int
		reason                    metav1.StatusReason
	}{
		{"malformed JSON", "POST", coll, "application/json", `{"metadata":`, 400, metav1.StatusReasonBadRequest},
		{"body not an object", "POST", coll, "application/json", `[1]`, 400, metav1.StatusReasonBadRequest},
		{"metadata of wrong type", "POST", coll, "application/json", `{"metadata":{"labels":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong kind", "POST", coll, "application/json", `{"kind":"Gadget","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"wrong apiVersion", "POST", coll, "application/json", `{"apiVersion":"v2","metadata":{"name":"x"}}`, 400, metav1.StatusReasonBadRequest},
		{"RV set on create", "POST", coll, "application/json", `{"metadata":{"name":"x","resourceVersion":"5"}}`, 400, metav1.StatusReasonBadRequest},
		{"name differs from URL", "PUT", item, "application/json", `{"metadata":{"name":"w2"}}`, 400, metav1.StatusReasonBadRequest},
		{"bad label selector", "GET", coll + "?labelSelector=a%20in%20(", "", nil, 400, metav1.StatusReasonBadRequest},
		{"bad field selector", "GET", coll + "?fieldSelector=a%3D%3D%3Db", "", nil, 400, metav1.StatusReasonBadRequest},
		{"unsupported field", "GET", coll + "?fieldSelector=spec.color%3Dred", "", nil, 400, metav1.StatusReasonBadRequest},
		{"bad resourceVersion", "GET", coll + "?resourceVersion=abc", "", nil, 400, metav1.StatusReasonBadRequest},
		{"negative limit", "GET", coll + "?limit=-1", "", nil, 400, metav1.StatusReasonBadRequest},
		{"bad watch flag", "GET", coll + "?watch=maybe", "", nil, 400, metav1.StatusReasonBadRequest},
		{"bad continue token", "GET", coll + "?limit=1&continue=garbage", "", nil, 400, metav1.StatusReasonBadRequest},
		{"dryRun not All", "DELETE", item + "?dryRun=Some", "", nil, 400, metav1.StatusReasonBadRequest},
		{"malformed DeleteOptions", "DELETE", item, "application/json", `{"preconditions":`, 400, metav1.StatusReasonBadRequest},
		{"unknown resource", "GET", apiBase + "/namespaces/default/gizmos", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknown path", "GET", "/api/v1/pods", "", nil, 404, metav1.StatusReasonNotFound},
		{"bad watch flag on item", "GET", item + "?watch=maybe", "", nil, 400, metav1.StatusReasonBadRequest},
		{"subresource", "GET", item + "/status", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknown group", "GET", "/apis/nope.example.com", "", nil, 404, metav1.StatusReasonNotFound},
		{"unknown version", "GET", "/apis/demo.listwatch.dev/v9", "", nil, 404, metav1.StatusReasonNotFound},
		{"namespaced item without namespace", "GET", apiBase + "/widgets/w1", "", nil, 404, metav1.StatusReasonNotFound},
		{"POST on item", "POST", item, "application/json", `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"PUT on collection", "PUT", coll, "application/json", `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"POST on all namespaces", "POST", apiBase + "/widgets", "application/json", `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"PUT on discovery", "PUT", "/apis", "application/json", `{}`, 405, metav1.StatusReasonMethodNotAllowed},
		{"already exists", "POST", coll, "application/json", testWidget("default", "w1", nil, ""), 409, metav1.StatusReasonAlreadyExists},
		{"stale RV on PUT", "PUT", item, "application/json", `{"metadata":{"resourceVersion":"1"}}`, 409, metav1.StatusReasonConflict},
		{"uid changed on PUT", "PUT", item, "application/json", `{"metadata":{"uid":"other"}}`, 409, metav1.StatusReasonConflict},
		{"RV precondition on DELETE", "DELETE", item, "application/json", `{"preconditions":{"resourceVersion":"1"}}`, 409, metav1.StatusReasonConflict},
		{"body too large", "POST", coll, "application/json", `{"metadata":{"name":"big"},"data":"` + strings.Repeat("x", 5000) + `"}`, 413, metav1.StatusReasonRequestEntityTooLarge},
		{"no content type is JSON", "POST", coll, "", `{}`, 422, metav1.StatusReasonInvalid},
		{"no content type on a patch", "PATCH", item, "", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"text/plain", "POST", coll, "text/plain", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"strategic merge patch", "PATCH", item, "application/strategic-merge-patch+json", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"apply patch without fieldManager", "PATCH", item, "application/apply-patch+yaml", `{}`, 422, metav1.StatusReasonInvalid},
		{"force on a merge patch", "PATCH", item + "?force=true", wire.MediaMergePatch, `{}`, 422, metav1.StatusReasonInvalid},
		{"JSON patch not a list", "PATCH", item, "application/json-patch+json", `{"op":"add"}`, 400, metav1.StatusReasonBadRequest},
		{"JSON patch failed test", "PATCH", item, "application/json-patch+json", `[{"op":"test","path":"/metadata/name","value":"other"}]`, 422, metav1.StatusReasonInvalid},
		{"JSON patch missing path", "PATCH", item, "application/json-patch+json", `[{"op":"remove","path":"/spec/nope"}]`, 422, metav1.StatusReasonInvalid},
		{"JSON patch renames", "PATCH", item, "application/json-patch+json", `[{"op":"replace","path":"/metadata/name","value":"w2"}]`, 400, metav1.StatusReasonBadRequest},
		{"JSON patch stale RV", "PATCH", item, "application/json-patch+json", `[{"op":"replace","path":"/metadata/resourceVersion","value":"1"}]`, 409, metav1.StatusReasonConflict},
		{"merge patch as JSON", "PATCH", item, "application/json", `{}`, 415, metav1.StatusReasonUnsupportedMediaType},
		{"invalid name", "POST", coll, "application/json", testWidget("default", "Not_Valid", nil, ""), 422, metav1.StatusReasonInvalid},
		{"missing name", "POST", coll, "application/json", `{"metadata":{}}`, 422, metav1.StatusReasonInvalid},
		{"namespace mismatch", "POST", coll, "application/json", testWidget("other", "w9", nil, ""), 400, metav1.StatusReasonBadRequest},
		{"namespace mismatch on PUT", "PUT", item, "application/json", testWidget("other", "w1", nil, ""), 400, metav1.StatusReasonBadRequest},
		{"invalid namespace", "POST", apiBase + "/namespaces/Bad_NS/widgets", "application/json", `{"metadata":{"name":"x"}}`, 422, metav1.StatusReasonInvalid},
		{"sendInitialEvents on list", "GET", coll + "?sendInitialEvents=true", "", nil, 422, metav1.StatusReasonInvalid},
		{"match without RV", "GET", coll + "?resourceVersionMatch=Exact", "", nil, 422, metav1.StatusReasonInvalid},
		{"unknown match", "GET", coll + "?resourceVersion=5&resourceVersionMatch=Newest", "", nil, 422, metav1.StatusReasonInvalid},
		{"exact RV 0", "GET", coll + "?resourceVersion=0&resourceVersionMatch=Exact", "", nil, 422, metav1.StatusReasonInvalid},
		{"continue with RV", "GET", coll + "?resourceVersion=5&continue=abc", "", nil, 422, metav1.StatusReasonInvalid},
		{"watch match without initial events", "GET", coll + "?watch=true&resourceVersionMatch=NotOlderThan", "", nil, 422, metav1.StatusReasonInvalid},
		{"initial events without bookmarks", "GET", coll + "?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan", "", nil, 422, metav1.StatusReasonInvalid},
		{"too large RV", "GET", item + "?resourceVersion=999999999", "", nil, 504, metav1.StatusReasonTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(c.method, c.path, c.ctype, c.body)
			st := r.status(t, c.code, c.reason)
			require.NotEmpty(t, st.Message)
			if c.code == 405 {
				require.NotEmpty(t, r.header.Get("Allow"))
			}
		})
	}
	for _, accept := range []string{"application/vnd.kubernetes.protobuf", "application/json;as=Table;v=v1beta1;g=meta.k8s.io"} {
		f.doAccept("GET", coll, "", accept, nil).status(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
	}
	for _, accept := range []string{"application/json", "*/*", "application/vnd.kubernetes.protobuf, application/json;q=0.9",
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json"} {
		require.Equal(t, http.StatusOK, f.doAccept("GET", coll, "", accept, nil).code, accept)
	}
	// None of the failed writes changed w1.
	got := f.do(http.MethodGet, item, "", nil).object(t)
	require.Equal(t, w1.GetResourceVersion(), got.GetResourceVersion())
	l := f.do(http.MethodGet, coll, "", nil).list(t)
	require.Len(t, l.Items, 1)
}

// notReadyStore is a real store whose readiness check fails, as a
// cacher's does before its first list.
type notReadyStore struct{ storage.Interface }

func (notReadyStore) ReadinessCheck() error {
	return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "storage is (re)initializing"}
}

func TestNotReadyIs429(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Resources[0].Storage = notReadyStore{c.Resources[0].Storage} })
	for _, q := range []string{"", "?watch=true"} {
		r := f.do(http.MethodGet, apiBase+"/namespaces/default/widgets"+q, "", nil)
		st := r.status(t, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
		require.Equal(t, "1", r.header.Get("Retry-After"))
		require.Equal(t, int32(1), st.Details.RetryAfterSeconds)
	}
}

// TestCorruptObjectIs500 provokes the one 500 a client can see: stored
// bytes that cannot be decoded.
func TestCorruptObjectIs500(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	_, err := etcdServer.Client.Put(ctx, embedtest.Prefix(t)+"widgets/default/bad", "{not json")
	require.NoError(t, err)
	r := f.do(http.MethodGet, apiBase+"/namespaces/default/widgets/bad", "", nil)
	require.Equal(t, http.StatusInternalServerError, r.code, string(r.body))
	r.status(t, http.StatusInternalServerError, metav1.StatusReasonInternalError)
}

// TestListOfCorruptObjectsNamesNoKeyInItsMessage: a list that meets two
// objects it cannot decode is a 500 StoreReadError whose message gives
// their number, not their storage keys (the log has them; the causes name
// them one by one as Kubernetes' do, for an unsafe delete).
func TestListOfCorruptObjectsNamesNoKeyInItsMessage(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	for _, name := range []string{"bad1", "bad2"} {
		_, err := etcdServer.Client.Put(ctx, embedtest.Prefix(t)+"widgets/default/"+name, "{not json")
		require.NoError(t, err)
	}
	st := f.do(http.MethodGet, apiBase+"/namespaces/default/widgets", "", nil).
		status(t, http.StatusInternalServerError, metav1.StatusReasonStoreReadError)
	require.Contains(t, st.Message, "2 stored objects cannot be decoded")
	require.NotContains(t, st.Message, "/widgets/", "the message names a storage key")
}

// TestRootPaths: GET / lists the paths served, as kube-apiserver does.
func TestRootPaths(t *testing.T) {
	f := newFixture(t)
	r := f.do(http.MethodGet, "/", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	var root metav1.RootPaths
	require.NoError(t, json.Unmarshal(r.body, &root))
	for _, p := range []string{"/api", "/apis", "/apis/demo.listwatch.dev", "/apis/demo.listwatch.dev/v1", "/readyz", "/version", "/openapi/v2"} {
		require.Contains(t, root.Paths, p)
	}
	require.True(t, slices.IsSorted(root.Paths))
}

func TestDiscovery(t *testing.T) {
	f := newFixture(t)
	var groups metav1.APIGroupList
	decodeInto(t, f.do(http.MethodGet, "/apis", "", nil), &groups)
	require.Equal(t, "APIGroupList", groups.Kind)
	require.Len(t, groups.Groups, 1)
	require.Equal(t, group, groups.Groups[0].Name)
	require.Equal(t, "demo.listwatch.dev/v1", groups.Groups[0].PreferredVersion.GroupVersion)

	var g metav1.APIGroup
	decodeInto(t, f.do(http.MethodGet, "/apis/"+group, "", nil), &g)
	require.Equal(t, "APIGroup", g.Kind)
	require.Equal(t, "v1", g.Versions[0].Version)

	var rl metav1.APIResourceList
	decodeInto(t, f.do(http.MethodGet, apiBase, "", nil), &rl)
	require.Equal(t, "APIResourceList", rl.Kind)
	require.Equal(t, "demo.listwatch.dev/v1", rl.GroupVersion)
	require.Len(t, rl.APIResources, 2)
	w := rl.APIResources[0]
	require.Equal(t, "widgets", w.Name)
	require.Equal(t, "widget", w.SingularName)
	require.True(t, w.Namespaced)
	require.Equal(t, "Widget", w.Kind)
	require.ElementsMatch(t, []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}, []string(w.Verbs))
	require.False(t, rl.APIResources[1].Namespaced)

	var legacy metav1.APIVersions
	decodeInto(t, f.do(http.MethodGet, "/api", "", nil), &legacy)
	require.Equal(t, "APIVersions", legacy.Kind)
	require.Empty(t, legacy.Versions)

	var v map[string]string
	decodeInto(t, f.do(http.MethodGet, "/version", "", nil), &v)
	require.NotEmpty(t, v["gitVersion"])
	require.NotEmpty(t, v["goVersion"])
}

func decodeInto(tb testing.TB, r response, v any) {
	tb.Helper()
	require.Equal(tb, http.StatusOK, r.code, string(r.body))
	require.Equal(tb, "application/json", r.header.Get("Content-Type"))
	require.NoError(tb, json.Unmarshal(r.body, v), string(r.body))
}

func TestNewRejectsBadConfig(t *testing.T) {
	st := newStore(t, "/widgets")
	good := widgets(st)
	cases := map[string]func(r *Resource){
		"bad group":         func(r *Resource) { r.Group = "Not_A.Group" },
		"bad version":       func(r *Resource) { r.Version = "V1" },
		"plural namespaces": func(r *Resource) { r.Plural = "namespaces" },
		"no kind":           func(r *Resource) { r.Kind = "" },
		"no storage":        func(r *Resource) { r.Storage = nil },
		"key root slash":    func(r *Resource) { r.KeyRoot = "/widgets/" },
	}
	for name, edit := range cases {
		r := good
		edit(&r)
		_, err := New(Config{Resources: []Resource{r}})
		require.Error(t, err, name)
	}
	_, err := New(Config{})
	require.Error(t, err)
	_, err = New(Config{Resources: []Resource{good, good}})
	require.Error(t, err)
}

// TestGenerateNameRetriesATakenName: a name made from generateName that
// is taken is made again (the random source is seeded so that the first
// name the server makes is one the test created before); a name the body
// gives is never replaced.
func TestGenerateNameRetriesATakenName(t *testing.T) {
	f := newFixture(t)
	utilrand.Seed(20261129)
	taken := "retry-" + utilrand.String(5)
	r := f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", testWidget("default", taken, nil, ""))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))

	utilrand.Seed(20261129) // the server's first try is taken
	body := testWidget("default", "", nil, "")
	body["metadata"].(map[string]any)["generateName"] = "retry-"
	r = f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", body)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	got := r.object(t).GetName()
	require.True(t, strings.HasPrefix(got, "retry-"), got)
	require.NotEqual(t, taken, got)

	named := testWidget("default", taken, nil, "")
	named["metadata"].(map[string]any)["generateName"] = "retry-"
	f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", named).
		status(t, http.StatusConflict, metav1.StatusReasonAlreadyExists)
}
