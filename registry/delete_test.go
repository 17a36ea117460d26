package registry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
)

// deleteWidget deletes namespace/name through r.
func deleteWidget(t *testing.T, r *registry.Store, namespace, name string, opts registry.DeleteOptions) (*widget.Widget, bool, error) {
	t.Helper()
	out := &widget.Widget{}
	deleted, err := r.Delete(testCtx(t), widget.Key(namespace, name), out, opts)
	return out, deleted, err
}

// An object without finalizers is deleted; preconditions and Validate
// can stop it.
func TestDeleteWithoutFinalizers(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	first := create(t, r, widget.NewWidget("default", "w1"))

	_, _, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{Preconditions: storage.NewUIDPreconditions("other")})
	require.True(t, storage.IsCode(err, storage.CodeConflict), "got %v", err)
	refused := errors.New("refused")
	_, _, err = deleteWidget(t, r, "default", "w1", registry.DeleteOptions{
		Validate: func(context.Context, runtime.Object) error { return refused }})
	require.ErrorIs(t, err, refused)

	out, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{Preconditions: storage.NewUIDPreconditions(string(first.UID))})
	require.NoError(t, err)
	assert.True(t, deleted)
	assert.Equal(t, first.UID, out.UID)
	_, err = get(t, st, "default", "w1")
	require.True(t, storage.IsCode(err, storage.CodeNotFound), "got %v", err)
}

// An object with finalizers is marked (deletionTimestamp,
// deletionGracePeriodSeconds 0) and stays; deleting it again changes
// nothing; it may not gain finalizers; removing the last one deletes it.
func TestDeleteWithFinalizers(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	w := widget.NewWidget("default", "w1")
	w.Finalizers = []string{"example.com/a", "example.com/b"}
	create(t, r, w)

	out, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{})
	require.NoError(t, err)
	assert.False(t, deleted)
	require.NotNil(t, out.DeletionTimestamp)
	require.NotNil(t, out.DeletionGracePeriodSeconds)
	assert.Equal(t, int64(0), *out.DeletionGracePeriodSeconds)
	marked, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	require.NotNil(t, marked.DeletionTimestamp)
	assert.Equal(t, int64(2), marked.Generation, "marking bumps the generation once")

	again, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{})
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.Equal(t, marked.ResourceVersion, again.ResourceVersion, "a second delete wrote")
	assert.Equal(t, int64(2), again.Generation)

	_, _, err = update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) {
		w.Finalizers = append(w.Finalizers, "example.com/c")
	})
	require.True(t, apierrors.IsInvalid(err), "new finalizer while deleting: %v", err)

	_, res, err := update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) {
		w.Finalizers = []string{"example.com/b"}
		w.DeletionTimestamp = nil // cannot be undone by an update
	})
	require.NoError(t, err)
	assert.False(t, res.Deleted)
	kept, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	require.NotNil(t, kept.DeletionTimestamp)
	assert.True(t, marked.DeletionTimestamp.Equal(kept.DeletionTimestamp))

	last, res, err := update(t, r, "default", "w1", registry.UpdateOptions{}, func(w *widget.Widget) { w.Finalizers = nil })
	require.NoError(t, err)
	assert.True(t, res.Deleted)
	assert.Empty(t, last.Finalizers)
	_, err = get(t, st, "default", "w1")
	require.True(t, storage.IsCode(err, storage.CodeNotFound), "got %v", err)
}

// A dry-run delete reports what would happen and writes nothing.
func TestDeleteDryRun(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	create(t, r, widget.NewWidget("default", "plain"))
	w := widget.NewWidget("default", "held")
	w.Finalizers = []string{"example.com/a"}
	create(t, r, w)

	_, deleted, err := deleteWidget(t, r, "default", "plain", registry.DeleteOptions{DryRun: true})
	require.NoError(t, err)
	assert.True(t, deleted)
	out, deleted, err := deleteWidget(t, r, "default", "held", registry.DeleteOptions{DryRun: true})
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.NotNil(t, out.DeletionTimestamp)

	_, err = get(t, st, "default", "plain")
	require.NoError(t, err)
	held, err := get(t, st, "default", "held")
	require.NoError(t, err)
	assert.Nil(t, held.DeletionTimestamp)
}

// A delete racing with the removal of the last finalizer never leaves the
// object behind: whichever goes first, the object ends deleted.
func TestDeleteRacesFinalizerRemoval(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	for i := range 20 {
		name := fmt.Sprintf("w%d", i)
		w := widget.NewWidget("default", name)
		w.Finalizers = []string{"example.com/a"}
		create(t, r, w)
		errs := make(chan error, 2)
		go func() {
			_, err := r.Delete(testCtx(t), widget.Key("default", name), &widget.Widget{}, registry.DeleteOptions{})
			errs <- err
		}()
		go func() {
			_, err := r.Update(testCtx(t), widget.Key("default", name), &widget.Widget{}, registry.UpdateOptions{},
				func(cur runtime.Object) (runtime.Object, error) {
					cur.(*widget.Widget).Finalizers = nil
					return cur, nil
				})
			if storage.IsCode(err, storage.CodeNotFound) {
				err = nil // the delete finished first
			}
			errs <- err
		}()
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
		_, err := get(t, st, "default", name)
		require.True(t, storage.IsCode(err, storage.CodeNotFound), "%s left behind: %v", name, err)
	}
}

// A propagationPolicy sets the garbage collector's finalizers before the
// delete: Foreground and Orphan mark an object that had none, a second
// delete may switch between them, and Background removes them, deleting
// the object when no finalizer is left.
func TestDeletePropagation(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	create(t, r, widget.NewWidget("default", "w1"))
	del := func(policy metav1.DeletionPropagation) (*widget.Widget, bool) {
		t.Helper()
		out, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: policy})
		require.NoError(t, err)
		return out, deleted
	}

	out, deleted := del(metav1.DeletePropagationForeground)
	assert.False(t, deleted)
	assert.Equal(t, []string{metav1.FinalizerDeleteDependents}, out.Finalizers)
	require.NotNil(t, out.DeletionTimestamp)
	stored, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	assert.Equal(t, out.ResourceVersion, stored.ResourceVersion)
	assert.Equal(t, []string{metav1.FinalizerDeleteDependents}, stored.Finalizers)

	out, deleted = del("")
	assert.False(t, deleted)
	assert.Equal(t, stored.ResourceVersion, out.ResourceVersion, "a delete without a policy wrote")

	out, deleted = del(metav1.DeletePropagationOrphan)
	assert.False(t, deleted)
	assert.Equal(t, []string{metav1.FinalizerOrphanDependents}, out.Finalizers)
	assert.True(t, stored.DeletionTimestamp.Equal(out.DeletionTimestamp), "the deletionTimestamp moved")

	out, deleted = del(metav1.DeletePropagationBackground)
	assert.True(t, deleted)
	assert.Equal(t, []string{metav1.FinalizerOrphanDependents}, out.Finalizers, "the last state")
	_, err = get(t, st, "default", "w1")
	require.True(t, storage.IsCode(err, storage.CodeNotFound), "got %v", err)
}

// With a finalizer of its own, an object keeps it whatever the policy,
// and stays marked after Background removed the garbage collector's.
func TestDeletePropagationKeepsOtherFinalizers(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	w := widget.NewWidget("default", "w1")
	w.Finalizers = []string{"example.com/a"}
	create(t, r, w)

	out, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: metav1.DeletePropagationOrphan})
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.Equal(t, []string{"example.com/a", metav1.FinalizerOrphanDependents}, out.Finalizers)
	out, deleted, err = deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: metav1.DeletePropagationBackground})
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.Equal(t, []string{"example.com/a"}, out.Finalizers)
	stored, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/a"}, stored.Finalizers)
	assert.NotNil(t, stored.DeletionTimestamp)
}

// A policy goes through the preconditions and Validate as any delete
// does; a dry run with one writes nothing and answers the object as it
// would be; an unknown policy is 422 and changes nothing.
func TestDeletePropagationRefused(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	first := create(t, r, widget.NewWidget("default", "w1"))
	fg := metav1.DeletePropagationForeground

	_, _, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: fg,
		Preconditions: storage.NewUIDPreconditions("other")})
	require.True(t, storage.IsCode(err, storage.CodeConflict), "got %v", err)
	refused := errors.New("refused")
	_, _, err = deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: fg,
		Validate: func(context.Context, runtime.Object) error { return refused }})
	require.ErrorIs(t, err, refused)
	_, _, err = deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: "Sideways"})
	require.True(t, apierrors.IsInvalid(err), "got %v", err)

	out, deleted, err := deleteWidget(t, r, "default", "w1", registry.DeleteOptions{PropagationPolicy: fg, DryRun: true})
	require.NoError(t, err)
	assert.False(t, deleted)
	assert.Equal(t, []string{metav1.FinalizerDeleteDependents}, out.Finalizers)
	assert.NotNil(t, out.DeletionTimestamp)

	stored, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	assert.Equal(t, first.ResourceVersion, stored.ResourceVersion, "written")
	assert.Empty(t, stored.Finalizers)
	assert.Nil(t, stored.DeletionTimestamp)
}
