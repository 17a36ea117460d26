package cacher

import (
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/watchcache"
)

// fillChunk is the number of items one goroutine copies into a list at
// least: lists of 2*fillChunk items or more are copied by up to GOMAXPROCS
// goroutines (copying a cached object by value is bounded by memory
// bandwidth and the GC's write barriers, which several cores share out).
const fillChunk = 4096

// fillGrain is the number of items a copying goroutine takes at a time:
// the goroutines share the list out in grains rather than in fixed parts,
// and the caller waits for grains in progress, never for a goroutine to
// start, so that a helper that is not scheduled (the GC's worker or
// another request holding the other core) costs the list nothing: the
// caller copies its grains.
const fillGrain = 512

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
	workers := min(runtime.GOMAXPROCS(0), len(items)/fillChunk)
	if workers <= 1 {
		return copyRange(out, items, 0, len(items))
	}
	return copyShared(out, items, workers-1, func(f func()) { go f() })
}

// copyShared copies the elements' objects into out (of their length) on
// the calling goroutine and on helper goroutines that start starts, all
// taking fillGrain items at a time until none are left. It returns once
// every item is copied, whether or not each helper has run: a helper that
// runs later finds nothing left and returns at once.
func copyShared(out reflect.Value, items []*watchcache.Element, helpers int, start func(func())) error {
	n := int64(len(items))
	if n == 0 {
		return nil
	}
	var (
		next, done atomic.Int64
		mu         sync.Mutex
		errs       []error
	)
	finished := make(chan struct{})
	work := func() {
		for {
			from := next.Add(fillGrain) - fillGrain
			if from >= n {
				return
			}
			to := min(from+fillGrain, n)
			if err := copyRange(out, items, int(from), int(to)); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			// The grain's copies (and its error) happen before the
			// caller's return: whoever completes the last grain
			// observes every other grain's Add, and closes finished.
			if done.Add(to-from) == n {
				close(finished)
			}
		}
	}
	for range helpers {
		start(work)
	}
	work()
	<-finished
	mu.Lock()
	defer mu.Unlock()
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
