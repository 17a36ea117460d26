package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
)

// update runs r.Update on namespace/name with f changing the Widget.
func update(t *testing.T, r *registry.Store, namespace, name string, opts registry.UpdateOptions,
	f func(w *widget.Widget)) (*widget.Widget, registry.UpdateResult, error) {
	t.Helper()
	out := &widget.Widget{}
	res, err := r.Update(testCtx(t), widget.Key(namespace, name), out, opts, func(cur runtime.Object) (runtime.Object, error) {
		w := cur.(*widget.Widget)
		f(w)
		return w, nil
	})
	return out, res, err
}

// generation grows when the spec changes, not when metadata or status do;
// uid and creationTimestamp survive an update that clears them.
func TestUpdateGeneration(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	first := create(t, r, widget.NewWidget("default", "w1"))

	steps := []struct {
		name string
		f    func(w *widget.Widget)
		gen  int64
	}{
		{"spec", func(w *widget.Widget) { w.Spec.Replicas = 3 }, 2},
		{"labels", func(w *widget.Widget) { w.Labels = map[string]string{"a": "b"} }, 2},
		{"status", func(w *widget.Widget) { w.Status.ReadyReplicas = 3 }, 2},
		{"spec slice", func(w *widget.Widget) { w.Spec.Tags = []string{"x"} }, 3},
		{"generation by hand", func(w *widget.Widget) { w.Generation = 40 }, 3},
		{"server fields cleared", func(w *widget.Widget) {
			w.UID, w.CreationTimestamp, w.ResourceVersion = "", first.CreationTimestamp, ""
			w.CreationTimestamp.Time = w.CreationTimestamp.Add(-1e12)
		}, 3},
	}
	for _, s := range steps {
		out, res, err := update(t, r, "default", "w1", registry.UpdateOptions{}, s.f)
		require.NoError(t, err, s.name)
		assert.False(t, res.Created || res.Deleted, s.name)
		assert.Equal(t, s.gen, out.Generation, s.name)
		assert.Equal(t, first.UID, out.UID, s.name)
		assert.True(t, first.CreationTimestamp.Equal(&out.CreationTimestamp), s.name)
		stored, err := get(t, st, "default", "w1")
		require.NoError(t, err)
		assert.Equal(t, s.gen, stored.Generation, s.name)
	}
}

// A stale resourceVersion or another uid in the new object is a Conflict;
// a missing object is the storage's NotFound unless AllowCreate, which
// creates it with create's metadata.
func TestUpdateConflictsAndCreate(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	first := create(t, r, widget.NewWidget("default", "w1"))
	_, _, err := update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) { w.Spec.Color = "red" })
	require.NoError(t, err)

	_, _, err = update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) { w.ResourceVersion = first.ResourceVersion })
	require.True(t, apierrors.IsConflict(err), "stale resourceVersion: %v", err)
	assert.Contains(t, err.Error(), "the object has been modified")
	_, _, err = update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) { w.UID = "other" })
	require.True(t, apierrors.IsConflict(err), "other uid: %v", err)

	_, _, err = update(t, r, "default", "w2", registry.UpdateOptions{}, func(w *widget.Widget) {})
	require.True(t, storage.IsCode(err, storage.CodeNotFound), "got %v", err)
	out, res, err := update(t, r, "default", "w2", registry.UpdateOptions{AllowCreate: true}, func(w *widget.Widget) {
		*w = *widget.NewWidget("default", "w2")
	})
	require.NoError(t, err)
	assert.True(t, res.Created)
	assert.NotEmpty(t, out.UID)
	assert.Equal(t, int64(1), out.Generation)
}

// A dry-run update returns the result with the stored resourceVersion and
// writes nothing.
func TestUpdateDryRun(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	first := create(t, r, widget.NewWidget("default", "w1"))
	out, _, err := update(t, r, "default", "w1", registry.UpdateOptions{DryRun: true}, func(w *widget.Widget) { w.Spec.Replicas = 9 })
	require.NoError(t, err)
	assert.Equal(t, int64(2), out.Generation)
	assert.Equal(t, first.ResourceVersion, out.ResourceVersion)
	stored, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	assert.Equal(t, first.ResourceVersion, stored.ResourceVersion)
	assert.Equal(t, int64(0), stored.Spec.Replicas)
}
