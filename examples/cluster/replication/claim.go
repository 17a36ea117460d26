package replication

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Claims is what an owner (a ReplicaSet over pods, a Deployment over
// ReplicaSets) does with the candidates its selector may cover.
type Claims[T metav1.Object] struct {
	// Owned are the objects it controls and still selects.
	Owned []T
	// Adopt are orphans it selects: it becomes their controller.
	Adopt []T
	// Release are objects it controls but no longer selects: it removes
	// its ownerReference.
	Release []T
}

// Claim sorts candidates for owner with selector sel: an object
// controlled by another owner is left alone; one controlled by owner is
// kept when selected and released otherwise; an orphan is adopted when
// selected. An owner being deleted adopts and releases nothing, and
// objects being deleted are never adopted.
func Claim[T metav1.Object](owner metav1.Object, sel labels.Selector, candidates []T) Claims[T] {
	var c Claims[T]
	deleting := owner.GetDeletionTimestamp() != nil
	for _, obj := range candidates {
		ref := metav1.GetControllerOf(obj)
		matches := sel.Matches(labels.Set(obj.GetLabels()))
		switch {
		case ref != nil && ref.UID != owner.GetUID():
		case ref != nil && matches:
			c.Owned = append(c.Owned, obj)
		case ref != nil:
			if !deleting {
				c.Release = append(c.Release, obj)
			}
		case matches && !deleting && obj.GetDeletionTimestamp() == nil:
			c.Adopt = append(c.Adopt, obj)
		}
	}
	return c
}

// ControllerRef is the ownerReference that makes owner (of apiVersion and
// kind) an object's controller and blocks the owner's foreground
// deletion until the object is gone.
func ControllerRef(owner metav1.Object, apiVersion, kind string) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(),
		Controller: &yes, BlockOwnerDeletion: &yes}
}

// WithoutOwner returns refs without the references to uid.
func WithoutOwner(refs []metav1.OwnerReference, uid string) []metav1.OwnerReference {
	return slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return string(r.UID) == uid })
}
