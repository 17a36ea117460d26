package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	finalizerOrphan     = metav1.FinalizerOrphanDependents
	finalizerForeground = metav1.FinalizerDeleteDependents
)

// requireMarked checks that obj is being deleted (deletionTimestamp,
// deletionGracePeriodSeconds 0) with exactly finalizers.
func requireMarked(t *testing.T, obj *unstructured.Unstructured, finalizers ...string) {
	t.Helper()
	require.NotNil(t, obj.GetDeletionTimestamp(), "%s not marked", obj.GetName())
	require.NotNil(t, obj.GetDeletionGracePeriodSeconds())
	require.Equal(t, int64(0), *obj.GetDeletionGracePeriodSeconds())
	require.Equal(t, finalizers, obj.GetFinalizers())
}

// TestDeletePropagationPolicy: propagationPolicy Foreground or Orphan (in
// the body or the query), or the deprecated orphanDependents=true, marks
// the object with the garbage collector's finalizer and answers it (200);
// Background, orphanDependents=false and no policy delete it.
func TestDeletePropagationPolicy(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	for _, tc := range []struct {
		name, query string
		body        any
		finalizer   string // "": deleted
	}{
		{"foreground body", "", `{"propagationPolicy":"Foreground"}`, finalizerForeground},
		{"foreground query", "?propagationPolicy=Foreground", nil, finalizerForeground},
		{"orphan body", "", `{"propagationPolicy":"Orphan"}`, finalizerOrphan},
		{"orphan query", "?propagationPolicy=Orphan", nil, finalizerOrphan},
		{"orphandependents body", "", `{"orphanDependents":true}`, finalizerOrphan},
		{"orphandependents query", "?orphanDependents=true", nil, finalizerOrphan},
		{"background body", "", `{"propagationPolicy":"Background"}`, ""},
		{"background query", "?propagationPolicy=Background", nil, ""},
		{"no orphandependents", "", `{"orphanDependents":false}`, ""},
		{"no policy", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ReplaceAll(tc.name, " ", "-")
			f.create("default", name, nil, "")
			contentType := ""
			if tc.body != nil {
				contentType = "application/json"
			}
			r := f.do(http.MethodDelete, coll+"/"+name+tc.query, contentType, tc.body)
			require.Equal(t, http.StatusOK, r.code, string(r.body))
			answered := r.object(t)
			require.Equal(t, name, answered.GetName())
			got := f.do(http.MethodGet, coll+"/"+name, "", nil)
			if tc.finalizer == "" {
				require.Nil(t, answered.GetDeletionTimestamp())
				got.status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
				return
			}
			requireMarked(t, answered, tc.finalizer)
			require.Equal(t, http.StatusOK, got.code, string(got.body))
			stored := got.object(t)
			requireMarked(t, stored, tc.finalizer)
			require.Equal(t, answered.GetResourceVersion(), stored.GetResourceVersion())
		})
	}
}

// TestDeletePropagationRefused: orphanDependents together with
// propagationPolicy (whatever their values), an unknown policy, and failed
// preconditions change nothing: 422 Invalid with Kubernetes' messages, or
// 409, for a single object and for a collection.
func TestDeletePropagationRefused(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	w := f.create("default", "w1", nil, "")
	for _, tc := range []struct {
		query, body, message string
	}{
		{"", `{"orphanDependents":true,"propagationPolicy":"Foreground"}`,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Foreground": orphanDependents and deletionPropagation cannot be both set`},
		{"", `{"orphanDependents":false,"propagationPolicy":"Orphan"}`,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`},
		{"?orphanDependents=true&propagationPolicy=Background", "",
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set`},
		{"", `{"propagationPolicy":"foreground"}`,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "foreground": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"?propagationPolicy=Sideways", "",
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
	} {
		contentType := ""
		var body any
		if tc.body != "" {
			contentType, body = "application/json", tc.body
		}
		for _, path := range []string{coll + "/w1", coll} {
			st := f.do(http.MethodDelete, path+tc.query, contentType, body).
				status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
			require.Equal(t, tc.message, st.Message, "%s %s", path, tc.query+tc.body)
		}
	}
	f.do(http.MethodDelete, coll+"/w1", "application/json",
		`{"propagationPolicy":"Foreground","preconditions":{"resourceVersion":"1"}}`).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)
	f.do(http.MethodDelete, coll+"/w1", "application/json",
		`{"propagationPolicy":"Orphan","preconditions":{"uid":"not-the-uid"}}`).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)

	after := f.do(http.MethodGet, coll+"/w1", "", nil).object(t)
	require.Equal(t, w.GetResourceVersion(), after.GetResourceVersion(), "a refused delete wrote")
	require.Empty(t, after.GetFinalizers())
	require.Nil(t, after.GetDeletionTimestamp())

	r := f.do(http.MethodDelete, coll+"/w1", "application/json",
		map[string]any{"propagationPolicy": "Foreground", "preconditions": map[string]any{
			"uid": string(w.GetUID()), "resourceVersion": w.GetResourceVersion()}})
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	requireMarked(t, r.object(t), finalizerForeground)
}

// TestDeletePropagationSecondDelete: a DELETE of an object being deleted
// may switch its garbage collector finalizer (the deletionTimestamp
// stays); without a policy it changes nothing; Background removes the
// finalizer and, with it the last one, deletes the object.
func TestDeletePropagationSecondDelete(t *testing.T) {
	f := newFixture(t)
	path := apiBase + "/namespaces/default/widgets/w1"
	f.create("default", "w1", nil, "")
	del := func(body string) response {
		t.Helper()
		contentType := ""
		var b any
		if body != "" {
			contentType, b = "application/json", body
		}
		r := f.do(http.MethodDelete, path, contentType, b)
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		return r
	}

	first := del(`{"propagationPolicy":"Foreground"}`).object(t)
	requireMarked(t, first, finalizerForeground)

	orphan := del(`{"propagationPolicy":"Orphan"}`).object(t)
	requireMarked(t, orphan, finalizerOrphan)
	require.True(t, first.GetDeletionTimestamp().Equal(orphan.GetDeletionTimestamp()), "the deletionTimestamp moved")

	same := del("").object(t)
	requireMarked(t, same, finalizerOrphan)
	require.Equal(t, orphan.GetResourceVersion(), same.GetResourceVersion(), "a delete without a policy wrote")

	requireMarked(t, del(`{"orphanDependents":false,"dryRun":["All"]}`).object(t), finalizerOrphan)
	back := del(`{"propagationPolicy":"Foreground"}`).object(t)
	requireMarked(t, back, finalizerForeground)

	last := del(`{"propagationPolicy":"Background"}`).object(t)
	require.Equal(t, []string{finalizerForeground}, last.GetFinalizers(), "the answer is the last stored state")
	f.do(http.MethodGet, path, "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

// TestDeletePropagationUserFinalizer: an object's own finalizer stays
// whatever the policy; the garbage collector's goes after it; after
// Background removed that, the object stays marked for its own.
func TestDeletePropagationUserFinalizer(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	w := testWidget("default", "w1", nil, "")
	w["metadata"].(map[string]any)["finalizers"] = []any{"example.com/a"}
	r := f.do(http.MethodPost, coll, "application/json", w)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))

	for _, step := range []struct {
		query string
		want  []string
	}{
		{"?propagationPolicy=Orphan", []string{"example.com/a", finalizerOrphan}},
		{"?propagationPolicy=Background", []string{"example.com/a"}},
		{"", []string{"example.com/a"}},
		{"?propagationPolicy=Foreground", []string{"example.com/a", finalizerForeground}},
	} {
		r := f.do(http.MethodDelete, coll+"/w1"+step.query, "", nil)
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		requireMarked(t, r.object(t), step.want...)
		requireMarked(t, f.do(http.MethodGet, coll+"/w1", "", nil).object(t), step.want...)
	}
	p := f.do(http.MethodPatch, coll+"/w1", "application/merge-patch+json", `{"metadata":{"finalizers":["example.com/a"]}}`)
	require.Equal(t, http.StatusOK, p.code, string(p.body))
	requireMarked(t, p.object(t), "example.com/a")
	p = f.do(http.MethodPatch, coll+"/w1", "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, p.code, string(p.body))
	f.do(http.MethodGet, coll+"/w1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

// TestDeletePropagationDryRun: a dry run with a policy answers the object
// as the delete would leave it and writes nothing.
func TestDeletePropagationDryRun(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	w := f.create("default", "w1", nil, "")

	r := f.do(http.MethodDelete, coll+"/w1?dryRun=All&propagationPolicy=Foreground", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	requireMarked(t, r.object(t), finalizerForeground)
	r = f.do(http.MethodDelete, coll+"/w1", "application/json", `{"dryRun":["All"],"orphanDependents":true}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	requireMarked(t, r.object(t), finalizerOrphan)
	r = f.do(http.MethodDelete, coll+"?dryRun=All&propagationPolicy=Orphan", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	items := r.list(t).Items
	require.Len(t, items, 1)
	requireMarked(t, &items[0], finalizerOrphan)

	after := f.do(http.MethodGet, coll+"/w1", "", nil).object(t)
	require.Equal(t, w.GetResourceVersion(), after.GetResourceVersion(), "a dry run wrote")
	require.Empty(t, after.GetFinalizers())
	require.Nil(t, after.GetDeletionTimestamp())

	marked := f.do(http.MethodDelete, coll+"/w1?propagationPolicy=Orphan", "", nil).object(t)
	r = f.do(http.MethodDelete, coll+"/w1?dryRun=All&propagationPolicy=Background", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	still := f.do(http.MethodGet, coll+"/w1", "", nil).object(t)
	require.Equal(t, marked.GetResourceVersion(), still.GetResourceVersion(), "a dry run wrote")
	requireMarked(t, still, finalizerOrphan)
}

// TestDeleteCollectionPropagation: DELETE on a collection applies the
// policy to every object it matches, as a DELETE of each would.
func TestDeleteCollectionPropagation(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	for _, name := range []string{"a1", "a2"} {
		f.create("default", name, map[string]string{"app": "a"}, "")
	}
	held := testWidget("default", "a3", map[string]string{"app": "a"}, "")
	held["metadata"].(map[string]any)["finalizers"] = []any{"example.com/a"}
	r := f.do(http.MethodPost, coll, "application/json", held)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	f.create("default", "b1", map[string]string{"app": "b"}, "")

	r = f.do(http.MethodDelete, coll+"?labelSelector=app%3Da&propagationPolicy=Foreground", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	items := r.list(t).Items
	require.Len(t, items, 3)
	for _, it := range items {
		want := []string{finalizerForeground}
		if it.GetName() == "a3" {
			want = []string{"example.com/a", finalizerForeground}
		}
		requireMarked(t, &it, want...)
		requireMarked(t, f.do(http.MethodGet, coll+"/"+it.GetName(), "", nil).object(t), want...)
	}
	b1 := f.do(http.MethodGet, coll+"/b1", "", nil).object(t)
	require.Nil(t, b1.GetDeletionTimestamp(), "b1 is not selected")

	r = f.do(http.MethodDelete, coll+"?labelSelector=app%3Da", "application/json", `{"orphanDependents":false}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Len(t, r.list(t).Items, 3)
	left := f.do(http.MethodGet, coll+"?labelSelector=app%3Da", "", nil).list(t).Items
	require.Len(t, left, 1, "a3 stays for its own finalizer")
	requireMarked(t, &left[0], "example.com/a")
}

// TestKubectlDeleteCascade: kubectl delete --cascade=orphan|foreground
// leaves the object marked with the matching finalizer (--wait=false:
// nothing here removes it); --cascade=background deletes it, also after
// an earlier cascade marked it.
func TestKubectlDeleteCascade(t *testing.T) {
	f := newFixture(t)
	k := newKubectl(t, f)
	must := func(args ...string) string {
		t.Helper()
		out, err := k.run("", args...)
		require.NoError(t, err, out)
		return out
	}
	path := apiBase + "/namespaces/default/widgets/"
	for _, tc := range []struct{ cascade, finalizer string }{
		{"orphan", finalizerOrphan}, {"foreground", finalizerForeground},
	} {
		name := "w-" + tc.cascade
		f.create("default", name, nil, "")
		require.Contains(t, must("delete", "widget", name, "-n", "default", "--cascade="+tc.cascade, "--wait=false"),
			`"`+name+`" deleted`)
		requireMarked(t, f.do(http.MethodGet, path+name, "", nil).object(t), tc.finalizer)
		must("delete", "widget", name, "-n", "default", "--cascade=background")
		f.do(http.MethodGet, path+name, "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	}
}
