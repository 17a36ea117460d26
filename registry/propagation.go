package registry

import (
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// propagationFinalizers returns the finalizers of an object after a
// delete with policy, and whether they changed as a set. The garbage
// collector's two finalizers, orphan and foregroundDeletion, are what the
// first of these says:
//
//   - policy Orphan: orphan; Foreground: foregroundDeletion; Background:
//     neither;
//   - no policy (""): the one of the two the object has (the first in its
//     list, should it have both);
//   - neither: the default policy of every resource, Background.
//
// The object's other finalizers stay, in their order; a garbage collector
// finalizer that is added goes last. Kubernetes decides the same way
// (deletionFinalizersForGarbageCollection in k8s.io/apiserver's generic
// registry), where some built-in resources default to Orphan (old API
// versions of workloads) or to no collection (events); a resource served
// here, like a custom resource there, has Background.
func propagationFinalizers(finalizers []string, policy metav1.DeletionPropagation) ([]string, bool) {
	if policy == "" {
		policy = metav1.DeletePropagationBackground
		for _, f := range finalizers {
			if f == metav1.FinalizerOrphanDependents {
				policy = metav1.DeletePropagationOrphan
				break
			}
			if f == metav1.FinalizerDeleteDependents {
				policy = metav1.DeletePropagationForeground
				break
			}
		}
	}
	next := slices.DeleteFunc(slices.Clone(finalizers), isPropagationFinalizer)
	switch policy {
	case metav1.DeletePropagationOrphan:
		next = append(next, metav1.FinalizerOrphanDependents)
	case metav1.DeletePropagationForeground:
		next = append(next, metav1.FinalizerDeleteDependents)
	}
	if sameSet(finalizers, next) {
		return finalizers, false
	}
	return next, true
}

// isPropagationFinalizer reports whether f is one of the garbage
// collector's finalizers.
func isPropagationFinalizer(f string) bool {
	return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
}

// sameSet reports whether a and b hold the same strings, ignoring order
// and repetitions.
func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}

// checkPropagationPolicy refuses a policy Kubernetes does not know, with
// the 422 its DeleteOptions validation gives.
func checkPropagationPolicy(policy metav1.DeletionPropagation) error {
	switch policy {
	case "", metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "",
		field.ErrorList{field.NotSupported(field.NewPath("propagationPolicy"), policy, []string{
			string(metav1.DeletePropagationForeground), string(metav1.DeletePropagationBackground),
			string(metav1.DeletePropagationOrphan), "nil"})})
}
