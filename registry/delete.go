package registry

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/storage"
)

// DeleteOptions are the options of Delete.
type DeleteOptions struct {
	// Preconditions must hold on the stored object (storage conflict
	// otherwise).
	Preconditions *storage.Preconditions
	// Validate, when set, is called with the current object before it is
	// deleted or marked; its error aborts the delete and is returned as it
	// is.
	Validate storage.ValidateObjectFunc
	// DryRun checks everything and puts the result into out without
	// writing anything.
	DryRun bool
	// PropagationPolicy is what becomes of the object's dependents, by
	// the garbage collector finalizer the delete leaves on the object
	// (see propagationFinalizers): Foreground adds foregroundDeletion,
	// Orphan adds orphan, Background removes both; "" keeps the one the
	// object has. Any other value is 422 Invalid. (Kubernetes' deprecated
	// orphanDependents is Orphan when true, Background when false.)
	PropagationPolicy metav1.DeletionPropagation
}

// maxDeleteAttempts bounds how often Delete goes between deleting and
// marking an object whose finalizers keep changing.
const maxDeleteAttempts = 10

var (
	// errHasFinalizers stops the storage delete of an object to be marked.
	errHasFinalizers = errors.New("registry: the object has finalizers")
	// errNoFinalizers stops the marking of an object to be deleted.
	errNoFinalizers = errors.New("registry: the object has no finalizers")
)

// Delete deletes the object at key, or, when it has finalizers once
// opts.PropagationPolicy has added or removed the garbage collector's,
// sets those finalizers and marks it as being deleted (deletionTimestamp
// now, deletionGracePeriodSeconds 0; an object already marked keeps its
// deletionTimestamp, and only its garbage collector finalizer may change).
// It reports whether the object was deleted; out is its last state, or
// the marked object.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, opts DeleteOptions) (bool, error) {
	if err := checkPropagationPolicy(opts.PropagationPolicy); err != nil {
		return false, err
	}
	validate := opts.Validate
	if validate == nil {
		validate = storage.ValidateAllObjectFunc
	}
	if opts.DryRun {
		return s.dryRunDelete(ctx, key, out, opts, validate)
	}
	for range maxDeleteAttempts {
		err := s.cfg.Storage.Delete(ctx, key, out, opts.Preconditions, func(ctx context.Context, obj runtime.Object) error {
			a, err := accessor(obj)
			if err != nil {
				return err
			}
			if next, _ := propagationFinalizers(a.GetFinalizers(), opts.PropagationPolicy); len(next) > 0 {
				return errHasFinalizers
			}
			return validate(ctx, obj)
		}, nil, storage.DeleteOptions{})
		if !errors.Is(err, errHasFinalizers) {
			return err == nil, err
		}
		err = s.cfg.Storage.GuaranteedUpdate(ctx, key, out, false, opts.Preconditions,
			func(input runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				next, err := s.mark(ctx, input, opts.PropagationPolicy, validate)
				return next, nil, err
			}, nil, storage.UpdateOptions{})
		if !errors.Is(err, errNoFinalizers) {
			return false, err
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	a, _ := accessor(out)
	name := ""
	if a != nil {
		name = a.GetName()
	}
	return false, apierrors.NewConflict(s.cfg.Resource, name,
		errors.New("the object's finalizers kept changing during the delete; try again"))
}

// mark returns a copy of cur with the finalizers policy leaves it, marked
// as being deleted, or errNoFinalizers when it is left none (it is to be
// deleted instead).
func (s *Store) mark(ctx context.Context, cur runtime.Object, policy metav1.DeletionPropagation,
	validate storage.ValidateObjectFunc) (runtime.Object, error) {
	a, err := accessor(cur)
	if err != nil {
		return nil, err
	}
	finalizers, changed := propagationFinalizers(a.GetFinalizers(), policy)
	if len(finalizers) == 0 {
		return nil, errNoFinalizers
	}
	if err := validate(ctx, cur); err != nil {
		return nil, err
	}
	next := cur.DeepCopyObject()
	na, _ := accessor(next)
	if changed {
		na.SetFinalizers(finalizers)
	}
	if a.GetDeletionTimestamp() == nil {
		now := s.now()
		na.SetDeletionTimestamp(&now)
		na.SetDeletionGracePeriodSeconds(ptr.To[int64](0))
		if g := a.GetGeneration(); g > 0 {
			na.SetGeneration(g + 1) // the spec's fate changed: controllers see a new generation
		}
	}
	return next, nil
}

// dryRunDelete is Delete without the write.
func (s *Store) dryRunDelete(ctx context.Context, key string, out runtime.Object, opts DeleteOptions,
	validate storage.ValidateObjectFunc) (bool, error) {
	cur, err := newLike(out)
	if err != nil {
		return false, err
	}
	if err := s.cfg.Storage.Get(ctx, key, storage.GetOptions{}, cur); err != nil {
		return false, err
	}
	if err := opts.Preconditions.Check(key, cur); err != nil {
		return false, err
	}
	next, err := s.mark(ctx, cur, opts.PropagationPolicy, validate)
	if errors.Is(err, errNoFinalizers) {
		if err := validate(ctx, cur); err != nil {
			return false, err
		}
		return true, copyInto(out, cur)
	}
	if err != nil {
		return false, err
	}
	return false, copyInto(out, next)
}
