package etcd3

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

// fromStorage transforms a stored value back to encoded object bytes. A
// transformer failure is a corrupt object naming the key, unless the
// transformer could not run at all (value.IsUnavailable): that is an
// internal error, which says nothing about the value.
func (s *Store) fromStorage(ctx context.Context, etcdKey string, data []byte) ([]byte, bool, error) {
	out, stale, err := s.currentTransformer().TransformFromStorage(ctx, data, value.DefaultContext(etcdKey))
	if err != nil {
		key := s.userKey(etcdKey)
		err = fmt.Errorf("unable to transform key %q: %w", key, err)
		if value.IsUnavailable(err) {
			return nil, false, &storage.Error{Code: storage.CodeInternal, Key: key, Err: err}
		}
		return nil, false, storage.NewCorruptObjError(key, err)
	}
	return out, stale, nil
}

// toStorage transforms encoded object bytes for storage under etcdKey.
func (s *Store) toStorage(ctx context.Context, etcdKey string, data []byte) ([]byte, error) {
	out, err := s.currentTransformer().TransformToStorage(ctx, data, value.DefaultContext(etcdKey))
	if err != nil {
		return nil, fmt.Errorf("etcd3: transforming %q to storage: %w", s.userKey(etcdKey), err)
	}
	return out, nil
}

// encode serialises obj, reporting failures as invalid objects.
func (s *Store) encode(key string, obj runtime.Object) ([]byte, error) {
	data, err := runtime.Encode(s.codec, obj)
	if err != nil {
		return nil, storage.NewInvalidObjError(key, fmt.Sprintf("cannot encode object: %v", err))
	}
	return data, nil
}

// decodeInto zeroes objPtr, decodes data into it and sets its resource
// version to rev. A decoding failure is a corrupt object naming the key.
func (s *Store) decodeInto(etcdKey string, data []byte, objPtr runtime.Object, rev int64) error {
	if _, err := conversion.EnforcePtr(objPtr); err != nil {
		return fmt.Errorf("etcd3: unable to decode into %T: %w", objPtr, err)
	}
	if err := runtime.SetZeroValue(objPtr); err != nil {
		return fmt.Errorf("etcd3: unable to reset %T: %w", objPtr, err)
	}
	if _, _, err := s.codec.Decode(data, nil, objPtr); err != nil {
		return storage.NewCorruptObjError(s.userKey(etcdKey), err)
	}
	if err := s.versioner.UpdateObject(objPtr, uint64(rev)); err != nil {
		return fmt.Errorf("etcd3: setting resource version on %q: %w", s.userKey(etcdKey), err)
	}
	return nil
}

// setObject makes objPtr the object obj points to (a shallow copy: obj
// must be the caller's to give away) with resource version rev. It reports
// false, changing nothing, when obj is nil or not of objPtr's type.
func (s *Store) setObject(etcdKey string, obj, objPtr runtime.Object, rev int64) (bool, error) {
	if !storage.SetObject(objPtr, obj) {
		return false, nil
	}
	if err := s.versioner.UpdateObject(objPtr, uint64(rev)); err != nil {
		return true, fmt.Errorf("etcd3: setting resource version on %q: %w", s.userKey(etcdKey), err)
	}
	return true, nil
}

// decodeNew decodes data into a fresh object of the stored type.
func (s *Store) decodeNew(etcdKey string, data []byte, rev int64) (runtime.Object, error) {
	obj := s.newFunc()
	if err := s.decodeInto(etcdKey, data, obj, rev); err != nil {
		return nil, err
	}
	return obj, nil
}

// listAppender appends decoded items to a list object's Items slice; it
// works for typed lists (Items []T or []*T) and UnstructuredList.
type listAppender struct {
	items   reflect.Value // the Items slice (settable)
	newItem func() runtime.Object
	ptrElem bool
	// corrupt are the errors of the items that could not be read; the list
	// goes on past them, up to maxCorrupt, then fails (see corruptError).
	corrupt []*storage.Error
	// maxCorrupt is the most corrupt items a list reads past; negative: none.
	maxCorrupt int
	// stopped is why the list ended before its end after corrupt items.
	stopped error
}

// readFailed decides what an item's read error does to the list: nil when
// the list reads on past a corrupt item (recorded), otherwise the error that
// ends the list, naming the corrupt items met so far.
func (a *listAppender) readFailed(err error) error {
	var se *storage.Error
	corrupt := errors.As(err, &se) && se.Code == storage.CodeCorruptObj
	switch {
	case corrupt && a.maxCorrupt < 0:
		return err
	case corrupt:
		a.corrupt = append(a.corrupt, se)
		if len(a.corrupt) < a.maxCorrupt {
			return nil
		}
		a.stopped = storage.ErrTooManyCorrupt
	case len(a.corrupt) == 0:
		return err
	default:
		a.stopped = err
	}
	return a.corruptError()
}

// corruptError is nil when every item could be read; otherwise the error of
// the first corrupt item, naming every corrupt key (CorruptKeys) and why
// the list stopped early, if it did (ListStopped).
func (a *listAppender) corruptError() error {
	if len(a.corrupt) == 0 {
		return nil
	}
	first := *a.corrupt[0]
	for _, e := range a.corrupt {
		first.CorruptKeys = append(first.CorruptKeys, e.Key)
	}
	first.ListStopped = a.stopped
	if n := len(a.corrupt); n > 1 {
		// The keys are for the log (Error); the client is told the count.
		first.Msg = fmt.Sprintf("%d stored objects cannot be decoded", n)
	}
	return &first
}

func newListAppender(listObj runtime.Object, maxCorrupt int) (*listAppender, error) {
	itemsPtr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return nil, storage.NewInvalidArgumentError(fmt.Sprintf("list object %T has no Items", listObj), err)
	}
	v, err := conversion.EnforcePtr(itemsPtr)
	if err != nil || v.Kind() != reflect.Slice {
		return nil, storage.NewInvalidArgumentError(fmt.Sprintf("list object %T: Items is not a slice", listObj), err)
	}
	a := &listAppender{items: v, maxCorrupt: maxCorrupt}
	elem := v.Type().Elem()
	switch {
	case isUnstructuredList(listObj):
		a.newItem = func() runtime.Object { return &unstructured.Unstructured{} }
	case elem.Kind() == reflect.Pointer:
		a.ptrElem = true
		t := elem.Elem()
		a.newItem = func() runtime.Object { return reflect.New(t).Interface().(runtime.Object) }
	default:
		if !reflect.PointerTo(elem).Implements(reflect.TypeFor[runtime.Object]()) {
			return nil, storage.NewInvalidArgumentError(fmt.Sprintf("list object %T: items are not runtime.Objects", listObj), nil)
		}
		a.newItem = func() runtime.Object { return reflect.New(elem).Interface().(runtime.Object) }
	}
	if v.IsNil() {
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
	return a, nil
}

func isUnstructuredList(obj runtime.Object) bool {
	_, ok := obj.(*unstructured.UnstructuredList)
	return ok
}

func (a *listAppender) len() int { return a.items.Len() }

// reserve makes room for n more items, so that appending them does not
// grow (and copy) the slice again; a cache keeps the items, and so the
// whole slice, alive.
func (a *listAppender) reserve(n int) {
	if n > 0 {
		a.items.Grow(n)
	}
}

func (a *listAppender) append(obj runtime.Object) {
	ov := reflect.ValueOf(obj)
	if !a.ptrElem {
		ov = ov.Elem()
	}
	a.items.Set(reflect.Append(a.items, ov))
}

// newOf returns a new zero object of obj's concrete type.
func newOf(obj runtime.Object) runtime.Object {
	if out, ok := storage.NewLike(obj); ok {
		return out
	}
	return obj.DeepCopyObject()
}
