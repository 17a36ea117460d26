package storage

import (
	"fmt"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// Versioner reads and writes resource versions on objects and lists.
type Versioner interface {
	// UpdateObject sets obj's resourceVersion to rv (0 clears it).
	UpdateObject(obj runtime.Object, rv uint64) error
	// UpdateList sets a list's resourceVersion, continue token and remaining
	// item count (nil leaves it unset).
	UpdateList(obj runtime.Object, rv uint64, continueToken string, remainingItemCount *int64) error
	// PrepareObjectForStorage clears the fields that must not be persisted
	// (resourceVersion, selfLink).
	PrepareObjectForStorage(obj runtime.Object) error
	// ObjectResourceVersion returns obj's resourceVersion, 0 if unset.
	ObjectResourceVersion(obj runtime.Object) (uint64, error)
	// ParseResourceVersion parses an RV string; "" and "0" parse as 0.
	// Anything else that is not a positive integer is ErrInvalidArgument.
	ParseResourceVersion(rv string) (uint64, error)
}

// APIObjectVersioner is the Versioner for objects with ObjectMeta/ListMeta.
type APIObjectVersioner struct{}

var _ Versioner = APIObjectVersioner{}

// UpdateObject implements Versioner.
func (APIObjectVersioner) UpdateObject(obj runtime.Object, rv uint64) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	s := ""
	if rv != 0 {
		s = strconv.FormatUint(rv, 10)
	}
	acc.SetResourceVersion(s)
	return nil
}

// UpdateList implements Versioner.
func (APIObjectVersioner) UpdateList(obj runtime.Object, rv uint64, continueToken string, remainingItemCount *int64) error {
	if rv == 0 {
		return fmt.Errorf("list resource version must be positive")
	}
	acc, err := meta.ListAccessor(obj)
	if err != nil {
		return err
	}
	acc.SetResourceVersion(strconv.FormatUint(rv, 10))
	acc.SetContinue(continueToken)
	acc.SetRemainingItemCount(remainingItemCount)
	return nil
}

// PrepareObjectForStorage implements Versioner.
func (APIObjectVersioner) PrepareObjectForStorage(obj runtime.Object) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	acc.SetResourceVersion("")
	acc.SetSelfLink("")
	return nil
}

// ObjectResourceVersion implements Versioner.
func (v APIObjectVersioner) ObjectResourceVersion(obj runtime.Object) (uint64, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	rv := acc.GetResourceVersion()
	if rv == "" {
		return 0, nil
	}
	return v.ParseResourceVersion(rv)
}

// ParseResourceVersion implements Versioner.
func (APIObjectVersioner) ParseResourceVersion(rv string) (uint64, error) {
	r, err := ParseRV(rv)
	if err != nil {
		return 0, err
	}
	return r.validRevision()
}
