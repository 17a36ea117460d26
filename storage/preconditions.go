package storage

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Check returns a conflict error when obj does not satisfy p. A nil p always holds.
func (p *Preconditions) Check(key string, obj runtime.Object) error {
	if p == nil {
		return nil
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return NewInvalidObjError(key, fmt.Sprintf("can not check preconditions: %v", err))
	}
	if p.UID != nil && *p.UID != acc.GetUID() {
		return NewConflictError(key, 0, fmt.Sprintf(
			"Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, acc.GetUID()))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != acc.GetResourceVersion() {
		return NewConflictError(key, 0, fmt.Sprintf(
			"Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v",
			*p.ResourceVersion, acc.GetResourceVersion()))
	}
	return nil
}
