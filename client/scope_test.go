package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
)

// clusterScopedKinds returns newKinds with Part cluster-scoped.
func clusterScopedKinds(t *testing.T) *client.Kinds {
	t.Helper()
	kinds := newKinds(t)
	require.NoError(t, kinds.SetClusterScoped(&widget.Part{}))
	return kinds
}

// TestSetClusterScoped: the kind's keys lose their namespace segment, the
// other kinds are untouched, and an unknown kind changes nothing.
func TestSetClusterScoped(t *testing.T) {
	kinds := clusterScopedKinds(t)
	part, err := kinds.KindFor(&widget.PartList{})
	require.NoError(t, err)
	assert.False(t, part.Namespaced)
	assert.Equal(t, "/parts/p1", part.StorageKey("", "p1"))
	assert.Equal(t, "/parts", part.ListKey(""))
	require.NoError(t, part.CheckNamespace(""))
	err = part.CheckNamespace("default")
	assert.ErrorIs(t, err, client.ErrNamespaceOfClusterScoped)
	assert.True(t, client.IsBadRequest(err), "%v", err)

	w, err := kinds.KindFor(&widget.Widget{})
	require.NoError(t, err)
	assert.True(t, w.Namespaced)
	assert.Equal(t, "/widgets/default/w1", w.StorageKey("default", "w1"))
	require.NoError(t, w.CheckNamespace("default"))

	fresh := newKinds(t)
	err = fresh.SetClusterScoped(&widget.Part{}, &metav1.Status{})
	assert.ErrorIs(t, err, client.ErrUnknownKind)
	part, _ = fresh.KindFor(&widget.Part{})
	assert.True(t, part.Namespaced, "nothing changed on error")
}

// TestClusterScopedKind: a cluster-scoped kind is created, read, listed
// and deleted without a namespace, in process and over HTTP; a namespace
// given for it (key, InNamespace, metadata.namespace) is a Bad Request
// that changes nothing.
func TestClusterScopedKind(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := impl.of(t, clusterScopedKinds(t))
			for _, name := range []string{"p1", "p2"} {
				require.NoError(t, c.Create(ctx, &widget.Part{ObjectMeta: metav1.ObjectMeta{Name: name}}))
			}
			var got widget.Part
			require.NoError(t, c.Get(ctx, client.Key("", "p1"), &got))
			assert.Equal(t, "p1", got.Name)
			assert.Empty(t, got.Namespace)
			got.Labels = map[string]string{"a": "b"}
			require.NoError(t, c.Update(ctx, &got))

			badRequest := func(err error) {
				t.Helper()
				assert.ErrorIs(t, err, client.ErrNamespaceOfClusterScoped)
				assert.True(t, client.IsBadRequest(err), "%v", err)
			}
			badRequest(c.Get(ctx, client.Key("default", "p1"), &widget.Part{}))
			badRequest(c.List(ctx, &widget.PartList{}, client.InNamespace("default")))
			badRequest(c.Create(ctx, &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p3"}}))
			badRequest(c.Delete(ctx, &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p1"}}))
			badRequest(c.DeleteAllOf(ctx, &widget.Part{}, client.InNamespace("default")))

			var list widget.PartList
			require.NoError(t, c.List(ctx, &list))
			require.Len(t, list.Items, 2, "nothing was created or deleted by the rejected calls")

			require.NoError(t, c.Delete(ctx, &widget.Part{ObjectMeta: metav1.ObjectMeta{Name: "p1"}}))
			assert.True(t, client.IsNotFound(c.Get(ctx, client.Key("", "p1"), &widget.Part{})))
			require.NoError(t, c.DeleteAllOf(ctx, &widget.Part{}))
			require.NoError(t, c.List(ctx, &list))
			assert.Empty(t, list.Items)
		})
	}
}
