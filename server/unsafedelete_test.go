package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/server/auth"
)

// corrupt overwrites the etcd value of the widget ns/name, behind the
// server's back, with bytes no codec reads.
func corrupt(t *testing.T, ns, name string) string {
	t.Helper()
	resp, err := etcdServer.Client.Get(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	require.NoError(t, err)
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), "/"+ns+"/"+name) {
			_, err := etcdServer.Client.Put(testCtx(t), string(kv.Key), "\x00garbage{")
			require.NoError(t, err)
			return string(kv.Key)
		}
	}
	t.Fatalf("no etcd key for %s/%s", ns, name)
	return ""
}

// TestUnsafeDeleteOfCorruptObject: a value corrupted in etcd cannot be
// read or deleted normally; DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential (body or query)
// removes it, after which lists answer 200. The option is refused (422,
// Kubernetes' messages) with preconditions, propagationPolicy or
// gracePeriodSeconds, on deletecollection, and on a readable object.
func TestUnsafeDeleteOfCorruptObject(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "bad", nil, "")
	f.create("default", "bad2", nil, "")
	good := f.create("default", "good", nil, "")
	key := corrupt(t, "default", "bad")
	corrupt(t, "default", "bad2")

	st := f.do(http.MethodGet, coll+"/bad", "", nil).status(t, http.StatusInternalServerError, metav1.StatusReasonInternalError)
	require.NotContains(t, st.Message, "/widgets/", "the message names no storage key")
	f.do(http.MethodDelete, coll+"/bad", "", nil).status(t, http.StatusInternalServerError, metav1.StatusReasonInternalError)

	for _, body := range []string{
		`{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"preconditions":{"uid":"x"}}`,
		`{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"propagationPolicy":"Background"}`,
		`{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"gracePeriodSeconds":0}`,
	} {
		st := f.do(http.MethodDelete, coll+"/bad", "application/json", body).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
		require.Contains(t, st.Message, `DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .`)
	}
	st = f.do(http.MethodDelete, coll, "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Contains(t, st.Message, "is not allowed with DELETECOLLECTION")
	f.do(http.MethodDelete, coll+"/good", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	got := f.do(http.MethodGet, coll+"/good", "", nil)
	require.Equal(t, http.StatusOK, got.code, "a readable object is not deleted the unsafe way")
	require.Equal(t, good.GetUID(), got.object(t).GetUID())

	r := f.do(http.MethodDelete, coll+"/bad?dryRun=All", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	resp, err := etcdServer.Client.Get(testCtx(t), key)
	require.NoError(t, err)
	require.Equal(t, int64(1), resp.Count, "a dry run deletes nothing")
	f.do(http.MethodDelete, coll+"/good?dryRun=All", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)

	r = f.do(http.MethodDelete, coll+"/bad", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Contains(t, string(r.body), `"status":"Success"`)
	resp, err = etcdServer.Client.Get(testCtx(t), key)
	require.NoError(t, err)
	require.Zero(t, resp.Count, "the corrupt key is gone from etcd")
	r = f.do(http.MethodDelete, coll+"/bad2?ignoreStoreReadErrorWithClusterBreakingPotential=true", "", nil)
	require.Equal(t, http.StatusOK, r.code, "the option in the query: %s", r.body)

	l := f.do(http.MethodGet, coll, "", nil)
	require.Equal(t, http.StatusOK, l.code, string(l.body))
	require.Len(t, l.list(t).Items, 1)
}

// TestUnsafeDeleteAuthorization: with an Authorizer, the unsafe delete also
// needs the verb unsafe-delete-ignore-read-errors, as in Kubernetes.
func TestUnsafeDeleteAuthorization(t *testing.T) {
	var verbs []string
	f := newFixture(t, func(c *Config) {
		c.Authorizer = auth.AuthorizerFunc(func(_ context.Context, a auth.Attributes) (bool, string, error) {
			verbs = append(verbs, a.Verb)
			return a.Verb != unsafeDeleteVerb, "", nil
		})
	})
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "bad", nil, "")
	corrupt(t, "default", "bad")
	st := f.do(http.MethodDelete, coll+"/bad", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`).
		status(t, http.StatusForbidden, metav1.StatusReasonForbidden)
	require.Contains(t, st.Message, "cannot unsafe-delete-ignore-read-errors resource")
	require.Equal(t, []string{"create", "delete", unsafeDeleteVerb}, verbs)
}

// TestDeleteOptionsValidation: Kubernetes' DeleteOptions rules, with its
// messages.
func TestDeleteOptionsValidation(t *testing.T) {
	f := newFixture(t)
	f.create("default", "w1", nil, "")
	item := apiBase + "/namespaces/default/widgets/w1"
	st := f.do(http.MethodDelete, item, "application/json", `{"propagationPolicy":"Bogus"}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: "Foreground", "Background", "Orphan", "nil"`, st.Message)
	f.do(http.MethodDelete, item+"?propagationPolicy=Bogus", "", nil).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, item, "", nil).code, "nothing was deleted")
	r := f.do(http.MethodDelete, item+"?propagationPolicy=Background", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
}

// TestUnsafeDeleteThroughCacher: the unsafe delete works through a cacher,
// as serve runs it, even while the corrupt value keeps the cache from
// serving (how soon lists answer again after it is removed is the
// cacher's business and is tested there).
func TestUnsafeDeleteThroughCacher(t *testing.T) {
	f, _ := newCacherFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	f.create("default", "bad", nil, "")
	key := corrupt(t, "default", "bad")
	r := f.do(http.MethodDelete, coll+"/bad", "application/json", `{"ignoreStoreReadErrorWithClusterBreakingPotential":true}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	resp, err := etcdServer.Client.Get(testCtx(t), key)
	require.NoError(t, err)
	require.Zero(t, resp.Count)
}
