package registry

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/uuid"
)

// CreateOptions are the options of Create.
type CreateOptions struct {
	// DryRun prepares the object and puts it into out without writing it
	// (it has no resourceVersion then).
	DryRun bool
	// TTL > 0 makes the object expire after TTL seconds (the storage's
	// ttl).
	TTL uint64
}

// PrepareCreate sets the metadata a new object gets (see the package doc)
// on obj, in place. An object with a resourceVersion is a Bad Request.
func (s *Store) PrepareCreate(obj runtime.Object) error {
	a, err := accessor(obj)
	if err != nil {
		return err
	}
	if a.GetResourceVersion() != "" {
		return apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	a.SetUID(uuid.NewUUID())
	a.SetCreationTimestamp(s.now())
	a.SetGeneration(1)
	a.SetSelfLink("")
	a.SetDeletionTimestamp(nil)
	a.SetDeletionGracePeriodSeconds(nil)
	return nil
}

// Create stores a copy of obj, prepared by PrepareCreate, under key and
// decodes the stored object into out (obj itself is not changed). The
// storage's errors (storage.ErrKeyExists, ...) are returned as they are.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, opts CreateOptions) error {
	obj = obj.DeepCopyObject()
	if err := s.PrepareCreate(obj); err != nil {
		return err
	}
	if opts.DryRun {
		return copyInto(out, obj)
	}
	return s.cfg.Storage.Create(ctx, key, obj, out, opts.TTL)
}
