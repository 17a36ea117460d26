package k8scompat

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	lwstorage "github.com/listwatch/listwatch/storage"
)

// versioner presents a listwatch Versioner as a Kubernetes one. The method
// sets are identical; only parse errors are translated, into the
// storage.InvalidError Kubernetes' APIObjectVersioner returns.
type versioner struct {
	v lwstorage.Versioner
}

var _ k8sstorage.Versioner = versioner{}

// UpdateObject implements storage.Versioner.
func (v versioner) UpdateObject(obj runtime.Object, rv uint64) error {
	return v.v.UpdateObject(obj, rv)
}

// UpdateList implements storage.Versioner.
func (v versioner) UpdateList(obj runtime.Object, rv uint64, continueValue string, remainingItemCount *int64) error {
	return v.v.UpdateList(obj, rv, continueValue, remainingItemCount)
}

// PrepareObjectForStorage implements storage.Versioner.
func (v versioner) PrepareObjectForStorage(obj runtime.Object) error {
	return v.v.PrepareObjectForStorage(obj)
}

// ObjectResourceVersion implements storage.Versioner.
func (v versioner) ObjectResourceVersion(obj runtime.Object) (uint64, error) {
	rv, err := v.v.ObjectResourceVersion(obj)
	return rv, parseError("", err)
}

// ParseResourceVersion implements storage.Versioner.
func (v versioner) ParseResourceVersion(rv string) (uint64, error) {
	n, err := v.v.ParseResourceVersion(rv)
	return n, parseError(rv, err)
}

func parseError(rv string, err error) error {
	if err == nil {
		return nil
	}
	var e *lwstorage.Error
	if !errors.As(err, &e) || e.Code != lwstorage.CodeInvalidArgument {
		return err
	}
	return k8sstorage.NewInvalidError(field.ErrorList{
		field.Invalid(field.NewPath("resourceVersion"), rv, e.Error()),
	})
}
