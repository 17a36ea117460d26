package registry

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/storage"
)

// MutateFunc computes an object's next state from cur, its current state
// (a copy the function may change and return). Its error aborts the
// update and is returned as it is.
type MutateFunc func(cur runtime.Object) (runtime.Object, error)

// UpdateOptions are the options of Update.
type UpdateOptions struct {
	// Preconditions must hold on the stored object (storage conflict
	// otherwise).
	Preconditions *storage.Preconditions
	// AllowCreate hands a missing object to the MutateFunc as a zero
	// object (no resourceVersion) and creates what it returns, prepared as
	// Create prepares it. Without it a missing object is the storage's
	// not-found error.
	AllowCreate bool
	// DryRun computes the result and puts it into out, with the stored
	// resourceVersion, without writing anything.
	DryRun bool
}

// UpdateResult says what an Update did.
type UpdateResult struct {
	// Created: the object did not exist and was created (AllowCreate).
	Created bool
	// Deleted: the update removed the last finalizer of an object being
	// deleted, so the object was deleted; out is its last state.
	Deleted bool
}

// PrepareUpdate applies the update rules (see the package doc) to next, an
// update of cur, in place: a stale resourceVersion or a different uid is a
// Conflict, a new finalizer on an object being deleted is Invalid; uid,
// creationTimestamp and the deletion fields are carried over from cur,
// generation is cur's plus one when the spec changed, and next's
// resourceVersion is cleared for the write.
func (s *Store) PrepareUpdate(cur, next runtime.Object) error {
	ca, err := accessor(cur)
	if err != nil {
		return err
	}
	na, err := accessor(next)
	if err != nil {
		return err
	}
	if rv := na.GetResourceVersion(); rv != "" && rv != ca.GetResourceVersion() {
		return apierrors.NewConflict(s.cfg.Resource, ca.GetName(),
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	if uid := na.GetUID(); uid != "" && uid != ca.GetUID() {
		return apierrors.NewConflict(s.cfg.Resource, ca.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, ca.GetUID()))
	}
	if ca.GetDeletionTimestamp() != nil {
		errs := apivalidation.ValidateNoNewFinalizers(na.GetFinalizers(), ca.GetFinalizers(), field.NewPath("metadata", "finalizers"))
		if len(errs) > 0 {
			return apierrors.NewInvalid(schema.GroupKind{Group: s.cfg.Resource.Group, Kind: s.cfg.Kind}, ca.GetName(), errs)
		}
	}
	na.SetUID(ca.GetUID())
	na.SetCreationTimestamp(ca.GetCreationTimestamp())
	na.SetDeletionTimestamp(ca.GetDeletionTimestamp())
	na.SetDeletionGracePeriodSeconds(ca.GetDeletionGracePeriodSeconds())
	na.SetSelfLink("")
	gen := ca.GetGeneration()
	changed, err := specChanged(cur, next)
	if err != nil {
		return err
	}
	if changed {
		gen++
	}
	na.SetGeneration(gen)
	na.SetResourceVersion("")
	return nil
}

// finalized reports whether obj is being deleted and has no finalizers
// left: it is to be deleted.
func finalized(a metav1.Object) bool {
	return a.GetDeletionTimestamp() != nil && len(a.GetFinalizers()) == 0
}

// Update runs a read-modify-write of the object at key: mutate gets a
// copy of the current object, its result is prepared by PrepareUpdate (or
// PrepareCreate, see AllowCreate) and written with compare-and-swap,
// retrying from a fresh read on conflict; the stored object is decoded
// into out. When the result is an object being deleted without
// finalizers, it is then deleted (UpdateResult.Deleted, out its last
// state).
func (s *Store) Update(ctx context.Context, key string, out runtime.Object, opts UpdateOptions, mutate MutateFunc) (UpdateResult, error) {
	var res UpdateResult
	var deleteAfter bool
	try := func(input runtime.Object) (runtime.Object, error) {
		ia, err := accessor(input)
		if err != nil {
			return nil, err
		}
		res.Created = ia.GetResourceVersion() == ""
		deleteAfter = false
		next, err := mutate(input.DeepCopyObject())
		if err != nil {
			return nil, err
		}
		if next == nil {
			return nil, fmt.Errorf("%w: the update function returned nil", ErrNoObjectMeta)
		}
		if res.Created {
			return next, s.PrepareCreate(next)
		}
		if err := s.PrepareUpdate(input, next); err != nil {
			return nil, err
		}
		na, _ := accessor(next) // PrepareUpdate checked it
		deleteAfter = finalized(na)
		return next, nil
	}
	if opts.DryRun {
		return res, s.dryRunUpdate(ctx, key, out, opts, try, &deleteAfter, &res)
	}
	err := s.cfg.Storage.GuaranteedUpdate(ctx, key, out, opts.AllowCreate, opts.Preconditions,
		func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			next, err := try(input)
			return next, nil, err
		}, nil, storage.UpdateOptions{})
	if err != nil || !deleteAfter {
		return res, err
	}
	deleted, err := s.deleteFinalized(ctx, key, out)
	res.Deleted = deleted
	return res, err
}

// dryRunUpdate is Update without the write.
func (s *Store) dryRunUpdate(ctx context.Context, key string, out runtime.Object, opts UpdateOptions,
	try func(runtime.Object) (runtime.Object, error), deleteAfter *bool, res *UpdateResult) error {
	cur, err := newLike(out)
	if err != nil {
		return err
	}
	if err := s.cfg.Storage.Get(ctx, key, storage.GetOptions{IgnoreNotFound: opts.AllowCreate}, cur); err != nil {
		return err
	}
	if err := opts.Preconditions.Check(key, cur); err != nil {
		return err
	}
	next, err := try(cur)
	if err != nil {
		return err
	}
	ca, _ := accessor(cur) // try checked it
	na, err := accessor(next)
	if err != nil {
		return err
	}
	na.SetResourceVersion(ca.GetResourceVersion())
	res.Deleted = *deleteAfter
	return copyInto(out, next)
}

// errKept stops deleteFinalized's delete of an object that is no longer
// to be deleted.
var errKept = errors.New("registry: the object is not finalized any more")

// deleteFinalized deletes the object at key, written into out by an
// update as being deleted without finalizers, unless it has changed since
// into an object that is to stay (same uid, a finalizer back). It
// reports whether the object is gone; out becomes its last state then.
func (s *Store) deleteFinalized(ctx context.Context, key string, out runtime.Object) (bool, error) {
	a, err := accessor(out)
	if err != nil {
		return false, err
	}
	last, err := newLike(out)
	if err != nil {
		return false, err
	}
	pre := storage.NewUIDPreconditions(string(a.GetUID()))
	err = s.cfg.Storage.Delete(ctx, key, last, pre, func(_ context.Context, obj runtime.Object) error {
		oa, err := accessor(obj)
		if err != nil {
			return err
		}
		if !finalized(oa) {
			return errKept
		}
		return nil
	}, nil, storage.DeleteOptions{})
	switch {
	case err == nil:
		return true, copyInto(out, last)
	case errors.Is(err, errKept):
		return false, nil
	case storage.IsCode(err, storage.CodeNotFound), storage.IsCode(err, storage.CodeConflict):
		return true, nil // deleted meanwhile (or replaced by another object of that name)
	}
	return false, err
}
