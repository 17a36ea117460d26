package registry_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
)

// A typed in-process Create gets Kubernetes' metadata: uid,
// creationTimestamp, generation 1, and loses deletion fields it was given;
// the caller's object is not changed.
func TestCreateSetsMetadata(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	before := time.Now().UTC().Truncate(time.Second)
	w := widget.NewWidget("default", "w1")
	w.Spec.Replicas = 2
	w.UID = "client-chosen"
	gone := metav1.NewTime(time.Unix(1, 0))
	w.DeletionTimestamp = &gone
	w.Generation = 7
	out := create(t, r, w)

	assert.NotEmpty(t, out.UID)
	assert.NotEqual(t, "client-chosen", string(out.UID))
	assert.Equal(t, int64(1), out.Generation)
	assert.False(t, out.CreationTimestamp.Time.Before(before), "creationTimestamp %v before %v", out.CreationTimestamp, before)
	assert.Nil(t, out.DeletionTimestamp)
	assert.NotEmpty(t, out.ResourceVersion)
	assert.Equal(t, "client-chosen", string(w.UID), "the caller's object was changed")

	stored, err := get(t, st, "default", "w1")
	require.NoError(t, err)
	assert.Equal(t, out.UID, stored.UID)
	assert.Equal(t, int64(1), stored.Generation)
}

// A resourceVersion on a new object is a Bad Request, as in Kubernetes;
// an existing name is the storage's KeyExists.
func TestCreateRefusesResourceVersionAndDuplicates(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	w := widget.NewWidget("default", "w1")
	w.ResourceVersion = "5"
	err := r.Create(testCtx(t), widget.Key("default", "w1"), w, &widget.Widget{}, registry.CreateOptions{})
	require.True(t, apierrors.IsBadRequest(err), "got %v", err)
	assert.Contains(t, err.Error(), "resourceVersion should not be set on objects to be created")

	create(t, r, widget.NewWidget("default", "w1"))
	err = r.Create(testCtx(t), widget.Key("default", "w1"), widget.NewWidget("default", "w1"), &widget.Widget{}, registry.CreateOptions{})
	require.True(t, storage.IsCode(err, storage.CodeKeyExists), "got %v", err)
}

// A dry-run Create returns the prepared object and writes nothing.
func TestCreateDryRun(t *testing.T) {
	st := newWidgetStore(t)
	r := newRegistry(t, st)
	out := &widget.Widget{}
	require.NoError(t, r.Create(testCtx(t), widget.Key("default", "w1"), widget.NewWidget("default", "w1"), out,
		registry.CreateOptions{DryRun: true}))
	assert.NotEmpty(t, out.UID)
	assert.Equal(t, int64(1), out.Generation)
	assert.Empty(t, out.ResourceVersion)
	_, err := get(t, st, "default", "w1")
	require.True(t, storage.IsCode(err, storage.CodeNotFound), "dry run wrote: %v", err)
}

// New refuses a Config without storage.
func TestNewRequiresStorage(t *testing.T) {
	_, err := registry.New(registry.Config{})
	require.ErrorIs(t, err, registry.ErrNoStorage)
}
