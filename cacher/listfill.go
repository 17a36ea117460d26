package cacher

import (
	"errors"
	"reflect"
	"runtime"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/watchcache"
)

// fillChunk is the number of items one goroutine copies into a list at
// least: lists of 2*fillChunk items or more are copied by up to GOMAXPROCS
// goroutines, each a contiguous part (copying a cached object by value is
// bounded by memory bandwidth and the GC's write barriers, which several
// cores share out).
const fillChunk = 4096

// errItemType means a list's item type is not the type of the cached
// objects' pointees: setItems then leaves it to meta.SetList.
var errItemType = errors.New("cacher: list item type differs from the cached objects' type")

// setItems stores the elements' objects as the items of listObj. When the
// items are structs of the cached objects' type (a typed list such as a
// PodList, or an UnstructuredList), it allocates them once and copies each
// object into place, large lists in parallel; anything else (items that are
// runtime.Objects or RawExtensions, a convertible type) goes through
// meta.SetList.
func setItems(listObj apiruntime.Object, items []*watchcache.Element) error {
	ptr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return err
	}
	slice := reflect.ValueOf(ptr).Elem()
	if slice.Kind() != reflect.Slice || slice.Type().Elem().Kind() != reflect.Struct {
		return setItemsGeneric(listObj, items)
	}
	out := reflect.MakeSlice(slice.Type(), len(items), len(items))
	switch err := copyItems(out, items); {
	case errors.Is(err, errItemType):
		return setItemsGeneric(listObj, items)
	case err != nil:
		return err
	}
	slice.Set(out)
	return nil
}

// copyItems copies the elements' objects into out (of their length), by
// up to GOMAXPROCS goroutines for lists of 2*fillChunk items or more.
func copyItems(out reflect.Value, items []*watchcache.Element) error {
	parts := min(runtime.GOMAXPROCS(0), len(items)/fillChunk)
	if parts <= 1 {
		return copyRange(out, items, 0, len(items))
	}
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() {
			errs[p] = copyRange(out, items, p*len(items)/parts, (p+1)*len(items)/parts)
		})
	}
	errs[0] = copyRange(out, items, 0, len(items)/parts)
	wg.Wait()
	return errors.Join(errs...)
}

// copyRange copies the objects of items[from:to] into out[from:to].
func copyRange(out reflect.Value, items []*watchcache.Element, from, to int) error {
	want := reflect.PointerTo(out.Type().Elem())
	for i := from; i < to; i++ {
		obj, err := items[i].Object()
		if err != nil {
			return err
		}
		v := reflect.ValueOf(obj)
		if v.Type() != want || v.IsNil() {
			return errItemType
		}
		out.Index(i).Set(v.Elem())
	}
	return nil
}

// setItemsGeneric stores the elements' objects as the items of listObj
// with meta.SetList, whatever its item type.
func setItemsGeneric(listObj apiruntime.Object, items []*watchcache.Element) error {
	objs := make([]apiruntime.Object, len(items))
	for i, el := range items {
		obj, err := el.Object()
		if err != nil {
			return err
		}
		objs[i] = obj
	}
	return meta.SetList(listObj, objs)
}
