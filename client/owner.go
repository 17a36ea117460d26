package client

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// ErrAlreadyOwned is returned by SetControllerReference for an object that
// has another controller.
var ErrAlreadyOwned = fmt.Errorf("client: object already has a controller")

// SetControllerReference makes owner the controller of obj: an
// ownerReference with controller=true and blockOwnerDeletion=true, whose
// apiVersion and kind come from kinds. A builder's Owns(obj) then
// reconciles owner when obj changes. An existing reference to owner is
// updated; a reference to another controller is ErrAlreadyOwned.
func SetControllerReference(owner, obj Object, kinds *Kinds) error {
	kind, err := kinds.KindFor(owner)
	if err != nil {
		return err
	}
	if owner.GetNamespace() != "" && owner.GetNamespace() != obj.GetNamespace() {
		return fmt.Errorf("client: owner %s/%s is in another namespace than %s/%s",
			owner.GetNamespace(), owner.GetName(), obj.GetNamespace(), obj.GetName())
	}
	gvk := kind.GroupVersionKind
	ref := metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind,
		Name: owner.GetName(), UID: owner.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}
	refs := obj.GetOwnerReferences()
	for i, r := range refs {
		if r.Controller != nil && *r.Controller && r.UID != ref.UID {
			return fmt.Errorf("%w: %s %q", ErrAlreadyOwned, r.Kind, r.Name)
		}
		if r.UID == ref.UID {
			refs[i] = ref
			obj.SetOwnerReferences(refs)
			return nil
		}
	}
	obj.SetOwnerReferences(append(refs, ref))
	return nil
}

// ControllerOf returns obj's controller reference, or nil.
func ControllerOf(obj Object) *metav1.OwnerReference {
	for _, r := range obj.GetOwnerReferences() {
		if r.Controller != nil && *r.Controller {
			return &r
		}
	}
	return nil
}
