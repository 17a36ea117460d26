package gc

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// OwnerState is what became of one owner, by a live lookup of its
// reference (name and UID).
type OwnerState int

// The owner states.
const (
	// OwnerPresent: the owner exists with the reference's UID and is not
	// being deleted in the foreground.
	OwnerPresent OwnerState = iota
	// OwnerAbsent: no object of that name, or one with another UID (the
	// owner was deleted, and maybe recreated).
	OwnerAbsent
	// OwnerDeletingForeground: the owner is being deleted and waits, by
	// its foregroundDeletion finalizer, for its dependents to go.
	OwnerDeletingForeground
)

// Decision is what the collector does with a dependent.
type Decision struct {
	// Delete deletes the dependent, with Propagation.
	Delete bool
	// Propagation is the deletion's policy: Foreground when an owner
	// waits on it in the foreground (so that the dependent's own
	// dependents go first), Background otherwise.
	Propagation metav1.DeletionPropagation
	// RemoveRefs are owner UIDs to remove from the dependent's
	// ownerReferences: the absent ones, when a present owner keeps it.
	RemoveRefs []types.UID
}

// Decide says what to do with a dependent whose owners are refs, state
// telling what became of each: nothing while none is absent or deleting;
// delete it when no owner is present any more (in the foreground when one
// waits for it); when some owner is still present, keep it and drop the
// references of the absent ones.
func Decide(refs []metav1.OwnerReference, state func(metav1.OwnerReference) OwnerState) Decision {
	var present, absent, waiting []types.UID
	for _, r := range refs {
		switch state(r) {
		case OwnerPresent:
			present = append(present, r.UID)
		case OwnerAbsent:
			absent = append(absent, r.UID)
		case OwnerDeletingForeground:
			waiting = append(waiting, r.UID)
		}
	}
	switch {
	case len(refs) == 0:
		return Decision{}
	case len(present) > 0:
		return Decision{RemoveRefs: absent}
	case len(waiting) > 0:
		return Decision{Delete: true, Propagation: metav1.DeletePropagationForeground}
	}
	return Decision{Delete: true, Propagation: metav1.DeletePropagationBackground}
}

// Blocking reports whether a dependent holds up the foreground deletion
// of the owner with uid: it refers to it with blockOwnerDeletion.
func Blocking(refs []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool {
		return r.UID == uid && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion
	})
}

// RefersTo reports whether refs name the owner with uid.
func RefersTo(refs []metav1.OwnerReference, uid types.UID) bool {
	return slices.ContainsFunc(refs, func(r metav1.OwnerReference) bool { return r.UID == uid })
}
