package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
)

// create stores a Widget default/name with labels and node, and returns
// it as stored.
func create(t *testing.T, ctx context.Context, c client.Client, name string, labels map[string]string, node string) *widget.Widget {
	t.Helper()
	w := widget.NewWidget("default", name)
	w.Labels, w.Spec.NodeName, w.Spec.Color = labels, node, "red"
	require.NoError(t, c.Create(ctx, w))
	return w
}

func names(ws []widget.Widget) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

// clientCases run against every implementation, with the same
// expectations.
var clientCases = []struct {
	name string
	run  func(t *testing.T, ctx context.Context, c client.Client)
}{
	{"CreateGetSetsMetadata", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", nil, "")
		assert.NotEmpty(t, w.UID)
		assert.NotEmpty(t, w.ResourceVersion)
		assert.EqualValues(t, 1, w.Generation)
		var got widget.Widget
		require.NoError(t, c.Get(ctx, client.Key("default", "w1"), &got))
		assert.Equal(t, w.UID, got.UID)
		assert.Equal(t, "red", got.Spec.Color)
	}},
	{"GenerateName", func(t *testing.T, ctx context.Context, c client.Client) {
		w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "gen-"}}
		require.NoError(t, c.Create(ctx, w))
		assert.True(t, strings.HasPrefix(w.Name, "gen-") && len(w.Name) > len("gen-"), "name %q", w.Name)
		require.NoError(t, c.Get(ctx, client.KeyOf(w), &widget.Widget{}))
	}},
	{"CreateExistingIsAlreadyExists", func(t *testing.T, ctx context.Context, c client.Client) {
		create(t, ctx, c, "w1", nil, "")
		err := c.Create(ctx, widget.NewWidget("default", "w1"))
		assert.True(t, client.IsAlreadyExists(err), "%v", err)
	}},
	{"GetMissingIsNotFound", func(t *testing.T, ctx context.Context, c client.Client) {
		err := c.Get(ctx, client.Key("default", "nope"), &widget.Widget{})
		assert.True(t, client.IsNotFound(err), "%v", err)
		assert.NoError(t, client.IgnoreNotFound(err))
	}},
	{"UpdateStaleIsConflictFreshBumpsGeneration", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", nil, "")
		stale := w.DeepCopy()
		w.Spec.Replicas = 3
		require.NoError(t, c.Update(ctx, w))
		assert.EqualValues(t, 2, w.Generation)
		stale.Spec.Replicas = 5
		err := c.Update(ctx, stale)
		assert.True(t, client.IsConflict(err), "%v", err)
	}},
	{"UpdateKeepsStatusStatusWriterChangesOnlyStatus", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", nil, "")
		w.Status.ReadyReplicas = 7
		require.NoError(t, c.Status().Update(ctx, w))
		assert.EqualValues(t, 7, w.Status.ReadyReplicas)
		assert.EqualValues(t, 1, w.Generation, "a status write is no spec change")
		w.Status.ReadyReplicas = 1
		w.Spec.Color = "blue"
		require.NoError(t, c.Update(ctx, w))
		var got widget.Widget
		require.NoError(t, c.Get(ctx, client.KeyOf(w), &got))
		assert.EqualValues(t, 7, got.Status.ReadyReplicas, "Update keeps the stored status")
		assert.Equal(t, "blue", got.Spec.Color)
	}},
	{"PatchMergeAndJSON", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", nil, "")
		before := w.DeepCopy()
		w.Spec.Color = "green"
		require.NoError(t, c.Patch(ctx, w, client.MergeFrom(before)))
		assert.Equal(t, "green", w.Spec.Color)
		require.NoError(t, c.Patch(ctx, w, client.RawPatch(types.JSONPatchType,
			[]byte(`[{"op":"add","path":"/spec/replicas","value":4}]`))))
		var got widget.Widget
		require.NoError(t, c.Get(ctx, client.KeyOf(w), &got))
		assert.Equal(t, "green", got.Spec.Color)
		assert.EqualValues(t, 4, got.Spec.Replicas)
		err := c.Patch(ctx, w, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"test","path":"/spec/color","value":"no"}]`)))
		assert.Error(t, err)
	}},
	{"StatusPatch", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", nil, "")
		require.NoError(t, c.Status().Patch(ctx, w, client.RawPatch(types.MergePatchType,
			[]byte(`{"status":{"readyReplicas":2},"spec":{"color":"ignored"}}`))))
		var got widget.Widget
		require.NoError(t, c.Get(ctx, client.KeyOf(w), &got))
		assert.EqualValues(t, 2, got.Status.ReadyReplicas)
		assert.Equal(t, "red", got.Spec.Color, "a status patch changes only status")
	}},
	{"ListSelectorsAndPages", func(t *testing.T, ctx context.Context, c client.Client) {
		create(t, ctx, c, "a", map[string]string{"app": "x"}, "n1")
		create(t, ctx, c, "b", map[string]string{"app": "y"}, "n2")
		create(t, ctx, c, "c", map[string]string{"app": "x"}, "n2")
		other := widget.NewWidget("other", "d")
		require.NoError(t, c.Create(ctx, other))

		var all widget.WidgetList
		require.NoError(t, c.List(ctx, &all))
		assert.ElementsMatch(t, []string{"a", "b", "c", "d"}, names(all.Items))
		var list widget.WidgetList
		require.NoError(t, c.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{"app": "x"}))
		assert.ElementsMatch(t, []string{"a", "c"}, names(list.Items))
		require.NoError(t, c.List(ctx, &list, client.MatchingFields{"spec.nodeName": "n2"}))
		assert.ElementsMatch(t, []string{"b", "c"}, names(list.Items))

		var page widget.WidgetList
		require.NoError(t, c.List(ctx, &page, client.InNamespace("default"), client.Limit(2)))
		require.Len(t, page.Items, 2)
		require.NotEmpty(t, page.Continue)
		var rest widget.WidgetList
		require.NoError(t, c.List(ctx, &rest, client.InNamespace("default"), client.Limit(2), client.Continue(page.Continue)))
		assert.ElementsMatch(t, []string{"a", "b", "c"}, append(names(page.Items), names(rest.Items)...))
	}},
	{"UnstructuredObjects", func(t *testing.T, ctx context.Context, c client.Client) {
		create(t, ctx, c, "w1", nil, "")
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(widget.GroupVersion.WithKind(widget.Kind))
		require.NoError(t, c.Get(ctx, client.Key("default", "w1"), u))
		color, _, _ := unstructured.NestedString(u.Object, "spec", "color")
		assert.Equal(t, "red", color)
	}},
	{"DeletePreconditionsAndDeleteAllOf", func(t *testing.T, ctx context.Context, c client.Client) {
		w := create(t, ctx, c, "w1", map[string]string{"app": "x"}, "")
		err := c.Delete(ctx, w, client.Preconditions{UID: ptr.To(types.UID("not-its-uid"))})
		assert.True(t, client.IsConflict(err), "%v", err)
		require.NoError(t, c.Delete(ctx, w, client.Preconditions{UID: &w.UID},
			client.PropagationPolicy(metav1.DeletePropagationBackground)))
		assert.True(t, client.IsNotFound(c.Get(ctx, client.KeyOf(w), &widget.Widget{})))
		assert.True(t, client.IsNotFound(c.Delete(ctx, w)))

		create(t, ctx, c, "a", map[string]string{"app": "x"}, "")
		create(t, ctx, c, "b", map[string]string{"app": "x"}, "")
		create(t, ctx, c, "keep", map[string]string{"app": "y"}, "")
		require.NoError(t, c.DeleteAllOf(ctx, &widget.Widget{}, client.InNamespace("default"), client.MatchingLabels{"app": "x"}))
		var list widget.WidgetList
		require.NoError(t, c.List(ctx, &list, client.InNamespace("default")))
		assert.Equal(t, []string{"keep"}, names(list.Items))
	}},
	{"UnknownKindAndUnnamedAreTypedErrors", func(t *testing.T, ctx context.Context, c client.Client) {
		err := c.Get(ctx, client.Key("default", "x"), &unstructured.Unstructured{})
		assert.ErrorIs(t, err, client.ErrUnknownKind)
		err = c.Create(ctx, &widget.Widget{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}})
		assert.True(t, client.IsInvalid(err) || client.IsBadRequest(err), "%v", err)
	}},
}

// TestClient runs every case against the in-process and the HTTP client.
func TestClient(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			for _, tc := range clientCases {
				t.Run(tc.name, func(t *testing.T) {
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					tc.run(t, ctx, impl.new(t))
				})
			}
		})
	}
}

// TestStaleStatusUpdateIsAConflictNamingTheObject: a status write from a
// stale object is a Conflict that names the object, in process and over
// HTTP.
func TestStaleStatusUpdateIsAConflictNamingTheObject(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := impl.new(t)
			w := create(t, ctx, c, "w1", nil, "")
			stale := w.DeepCopy()
			w.Spec.Color = "blue"
			require.NoError(t, c.Update(ctx, w))
			stale.Status.ReadyReplicas = 3
			err := c.Status().Update(ctx, stale)
			require.True(t, client.IsConflict(err), "%v", err)
			require.Contains(t, err.Error(), `"w1"`)
		})
	}
}
