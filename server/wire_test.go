package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// TestDeleteCollection: DELETE on a collection deletes what its selectors
// match and answers 200 with the deleted objects as a list; dryRun deletes
// nothing; across namespaces without a namespace in the path.
func TestDeleteCollection(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "a1", map[string]string{"app": "a"}, "n1")
	f.create("default", "a2", map[string]string{"app": "a"}, "n2")
	f.create("default", "b1", map[string]string{"app": "b"}, "n1")
	f.create("other", "o1", map[string]string{"app": "a"}, "n1")

	dry := f.do(http.MethodDelete, coll+"?labelSelector=app%3Da&dryRun=All", "", nil)
	require.Equal(t, http.StatusOK, dry.code, string(dry.body))
	require.Len(t, dry.list(t).Items, 2)
	require.Len(t, f.do(http.MethodGet, coll, "", nil).list(t).Items, 3, "a dry run deletes nothing")

	r := f.do(http.MethodDelete, coll+"?labelSelector=app%3Da&fieldSelector=spec.nodeName%3Dn1", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	l := r.list(t)
	require.Equal(t, "WidgetList", l.GetKind())
	require.Len(t, l.Items, 1)
	require.Equal(t, "a1", l.Items[0].GetName())

	r = f.do(http.MethodDelete, coll, "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Len(t, r.list(t).Items, 2)
	require.Empty(t, f.do(http.MethodGet, coll, "", nil).list(t).Items)
	require.Len(t, f.do(http.MethodGet, apiBase+"/widgets", "", nil).list(t).Items, 1, "other namespaces are untouched")

	r = f.do(http.MethodDelete, apiBase+"/widgets", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Len(t, r.list(t).Items, 1)
	require.Empty(t, f.do(http.MethodGet, apiBase+"/widgets", "", nil).list(t).Items)
}

// TestYAMLBodiesAndResponses: application/yaml creates and updates, and is
// served to clients that ask for it (objects, lists, errors); a watch in
// YAML is 406 as in Kubernetes.
func TestYAMLBodiesAndResponses(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	body := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: y1\n  labels:\n    app: web\nspec:\n  replicas: 2\n"
	r := f.do(http.MethodPost, coll, wire.MediaYAML, body)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.Equal(t, map[string]string{"app": "web"}, r.object(t).GetLabels())

	r = f.do(http.MethodPut, coll+"/y1", wire.MediaYAML, "metadata:\n  name: y1\nspec:\n  replicas: 3\n")
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Equal(t, int64(3), r.object(t).Object["spec"].(map[string]any)["replicas"])
	f.do(http.MethodPost, coll, wire.MediaYAML, "metadata: [unclosed").status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)

	for _, path := range []string{coll + "/y1", coll} {
		r = f.doAccept(http.MethodGet, path, "", wire.MediaYAML, nil)
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		require.Equal(t, wire.MediaYAML, r.header.Get("Content-Type"))
		var v map[string]any
		require.NoError(t, yaml.Unmarshal(r.body, &v), string(r.body))
		require.Contains(t, string(r.body), "apiVersion: demo.listwatch.dev/v1\n")
	}
	r = f.doAccept(http.MethodGet, coll+"/missing", "", wire.MediaYAML, nil)
	require.Equal(t, http.StatusNotFound, r.code)
	require.Contains(t, string(r.body), "reason: NotFound\n")
	f.doAccept(http.MethodGet, coll+"?watch=true", "", wire.MediaYAML, nil).status(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
}

// TestWireDetails: the details where the server answered differently from
// kube-apiserver.
func TestWireDetails(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "w1", nil, "")

	// An empty continue is omitted from list metadata.
	r := f.do(http.MethodGet, coll, "", nil)
	require.NotContains(t, string(r.body), `"continue"`)
	r = f.do(http.MethodGet, coll+"?limit=1", "", nil)
	require.NotContains(t, string(r.body), `"continue"`)

	// The largest uint64 resourceVersion is "too large", not malformed.
	for _, path := range []string{coll, coll + "/w1"} {
		st := f.do(http.MethodGet, path+"?resourceVersion=18446744073709551615", "", nil).
			status(t, http.StatusGatewayTimeout, metav1.StatusReasonTimeout)
		require.Regexp(t, `^Timeout: Too large resource version: 18446744073709551615, current: \d+$`, st.Message)
		require.Equal(t, metav1.CauseTypeResourceVersionTooLarge, st.Details.Causes[0].Type)
	}

	// Unknown paths: Kubernetes' message.
	st := f.do(http.MethodGet, "/nope", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	require.Equal(t, "the server could not find the requested resource", st.Message)

	// A namespace in the body differing from the path: 400, Kubernetes' words.
	st = f.do(http.MethodPost, coll, "application/json", testWidget("other", "w2", nil, "")).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	require.Equal(t, "the namespace of the provided object does not match the namespace sent on the request", st.Message)

	// No storage keys in messages.
	st = f.do(http.MethodGet, coll+"/nope", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	require.Equal(t, `widgets.demo.listwatch.dev "nope" not found`, st.Message)
	st = f.do(http.MethodDelete, coll+"/w1", "application/json", `{"preconditions":{"resourceVersion":"1"}}`).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)
	require.NotContains(t, st.Message, "/widgets/")
	require.NotContains(t, st.Message, "key")

	// /version: a real version, never v0.0.0.
	v := f.do(http.MethodGet, "/version", "", nil)
	require.Equal(t, http.StatusOK, v.code)
	require.NotContains(t, string(v.body), `"gitVersion": "v0.0.0`)
	require.NotContains(t, string(v.body), `"gitVersion":"v0.0.0`)
}

// TestModuleVersion: /version's default from the build info.
func TestModuleVersion(t *testing.T) {
	bi := func(v string, settings ...debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: v}, Settings: settings}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "93acb5a0123456789abcdef"}
	require.Equal(t, "v1.2.3", versionFrom(bi("v1.2.3", rev)))
	require.Equal(t, "v0.1.0-dev+93acb5a01234", versionFrom(bi("(devel)", rev)))
	require.Equal(t, "v0.1.0-dev+93acb5a01234.dirty", versionFrom(bi("v0.0.0-20261125174500-93acb5a01234+dirty", rev,
		debug.BuildSetting{Key: "vcs.modified", Value: "true"})))
	require.Equal(t, "v0.1.0-dev", versionFrom(bi("(devel)")))
	major, minor := majorMinor("v0.1.0-dev+93acb5a01234")
	require.Equal(t, []string{"0", "1"}, []string{major, minor})
}

// failingStore answers every Get with an error carrying etcd and gRPC
// internals.
type failingStore struct{ storage.Interface }

func (failingStore) Get(context.Context, string, storage.GetOptions, runtime.Object) error {
	return errors.New("rpc error: code = ResourceExhausted desc = trying to send message larger than max (2097652 vs. 2097152)")
}

// TestInternalErrorsAreLogged: a 500's message names no internals; the
// server logs them.
func TestInternalErrorsAreLogged(t *testing.T) {
	f := newFixture(t)
	res := widgets(failingStore{f.widgets})
	res.Plural, res.Kind = "failings", "Failing"
	srv, err := New(Config{Resources: []Resource{res}})
	require.NoError(t, err)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, apiBase+"/namespaces/default/failings/x", nil)
	require.NoError(t, err)
	st := statusFor(errors.New("rpc error: code = ResourceExhausted"))
	require.NotContains(t, st.Message, "rpc error")
	require.Nil(t, st.Details)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.NotContains(t, rec.Body.String(), "ResourceExhausted")
	require.NotContains(t, rec.Body.String(), "2097152")
}

// TestNoContentTypeIsJSON: a create or update body without a Content-Type
// is read as JSON, as kube-apiserver reads it (kubectl scale
// --current-replicas sends its Scale so); a patch still needs its type.
func TestNoContentTypeIsJSON(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/ns/widgets"
	r := f.do(http.MethodPost, coll, "", testWidget("ns", "n1", nil, ""))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	u := r.object(t)
	u.Object["spec"] = map[string]any{"replicas": int64(2)}
	r = f.do(http.MethodPut, coll+"/n1", "", u.Object)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.EqualValues(t, 2, r.object(t).Object["spec"].(map[string]any)["replicas"])
	f.do(http.MethodPatch, coll+"/n1", "", `{}`).status(t, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType)
}
