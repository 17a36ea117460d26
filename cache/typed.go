package cache

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
)

// ErrTypeMismatch is returned by InformerOf when the cache's informer of
// T's kind holds objects of another Go type than T.
var ErrTypeMismatch = errors.New("cache: the kind's informer holds another type")

// InformerOf returns the cache's informer of T's kind (T is a pointer to
// a registered type, such as *corev1.Node), seen as a
// reflector.SharedInformer[T]: the same informer, store and handlers that
// InformerFor returns, made on first use and run by the cache, so that
// code written against typed informers shares the one watch of the kind
// instead of listing and watching it again. Objects handed out are the
// informer's own: read them, never modify them.
func InformerOf[T client.Object](c *Cache) (reflector.SharedInformer[T], error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("cache: InformerOf[%v]: not a pointer type", t)
	}
	kind, err := c.opts.Kinds.KindFor(reflect.New(t.Elem()).Interface().(T))
	if err != nil {
		return nil, err
	}
	if got := reflect.TypeOf(kind.New()); got != t {
		return nil, fmt.Errorf("%w: %s is %v, not %v", ErrTypeMismatch, kind.GroupVersionKind.Kind, got, t)
	}
	inf, err := c.InformerForKind(kind)
	if err != nil {
		return nil, err
	}
	return typedInformer[T]{inf: inf, ix: typedIndexer[T]{ix: inf.GetIndexer()}}, nil
}

// typedInformer is the view InformerOf returns: each call goes to inf,
// objects converted between client.Object and T.
type typedInformer[T client.Object] struct {
	inf *Informer
	ix  typedIndexer[T]
}

func (i typedInformer[T]) GetStore() reflector.Store[T]     { return i.ix }
func (i typedInformer[T]) GetIndexer() reflector.Indexer[T] { return i.ix }
func (i typedInformer[T]) HasSynced() bool                  { return i.inf.HasSynced() }
func (i typedInformer[T]) LastSyncResourceVersion() string  { return i.inf.LastSyncResourceVersion() }

func (i typedInformer[T]) AddIndexers(ix reflector.Indexers[T]) error {
	return i.ix.AddIndexers(ix)
}

func (i typedInformer[T]) AddEventHandler(h reflector.ResourceEventHandler[T]) (reflector.ResourceEventHandlerRegistration, error) {
	if h == nil || (reflect.ValueOf(h).Kind() == reflect.Pointer && reflect.ValueOf(h).IsNil()) {
		return nil, errors.New("cache: nil handler")
	}
	return i.inf.AddEventHandler(typedHandler[T]{h: h})
}

func (i typedInformer[T]) RemoveEventHandler(reg reflector.ResourceEventHandlerRegistration) error {
	return i.inf.RemoveEventHandler(reg)
}

// typedHandler gives the informer's notifications to a handler of T.
// Every object of the informer is a T (InformerOf checked that the kind
// decodes into T); the assertions are checked all the same, so that a
// broken invariant drops an object instead of panicking.
type typedHandler[T client.Object] struct {
	h reflector.ResourceEventHandler[T]
}

func (t typedHandler[T]) OnAdd(obj client.Object, initial bool) {
	if o, ok := obj.(T); ok {
		t.h.OnAdd(o, initial)
	}
}

func (t typedHandler[T]) OnUpdate(old, obj client.Object) {
	o, ok1 := old.(T)
	n, ok2 := obj.(T)
	if ok1 && ok2 {
		t.h.OnUpdate(o, n)
	}
}

func (t typedHandler[T]) OnDelete(obj client.Object, unknown bool) {
	if o, ok := obj.(T); ok {
		t.h.OnDelete(o, unknown)
	}
}

// typedIndexer is the informer's indexer seen as an Indexer[T].
type typedIndexer[T client.Object] struct {
	ix reflector.Indexer[client.Object]
}

// typedSlice returns the Ts of objs (all of them, see typedHandler).
func typedSlice[T client.Object](objs []client.Object) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}

// typedGot returns obj as T (the zero T when absent).
func typedGot[T client.Object](obj client.Object, ok bool) (T, bool) {
	t, isT := obj.(T)
	return t, ok && isT
}

func (x typedIndexer[T]) Add(obj T) error    { return x.ix.Add(obj) }
func (x typedIndexer[T]) Update(obj T) error { return x.ix.Update(obj) }
func (x typedIndexer[T]) Delete(obj T) error { return x.ix.Delete(obj) }
func (x typedIndexer[T]) List() []T          { return typedSlice[T](x.ix.List()) }
func (x typedIndexer[T]) ListKeys() []string { return x.ix.ListKeys() }
func (x typedIndexer[T]) Resync() error      { return x.ix.Resync() }

func (x typedIndexer[T]) Get(obj T) (T, bool, error) {
	got, ok, err := x.ix.Get(obj)
	if err != nil {
		var zero T
		return zero, false, err
	}
	item, ok := typedGot[T](got, ok)
	return item, ok, nil
}

func (x typedIndexer[T]) GetByKey(key string) (T, bool) { return typedGot[T](x.ix.GetByKey(key)) }

func (x typedIndexer[T]) Replace(list []T, rv string) error {
	objs := make([]client.Object, len(list))
	for i, o := range list {
		objs[i] = o
	}
	return x.ix.Replace(objs, rv)
}

func (x typedIndexer[T]) Index(name string, obj T) ([]T, error) {
	objs, err := x.ix.Index(name, obj)
	return typedSlice[T](objs), err
}

func (x typedIndexer[T]) IndexKeys(name, value string) ([]string, error) {
	return x.ix.IndexKeys(name, value)
}

func (x typedIndexer[T]) ListIndexFuncValues(name string) []string {
	return x.ix.ListIndexFuncValues(name)
}

func (x typedIndexer[T]) ByIndex(name, value string) ([]T, error) {
	objs, err := x.ix.ByIndex(name, value)
	return typedSlice[T](objs), err
}

// GetIndexers returns the informer's index functions, as functions of T.
func (x typedIndexer[T]) GetIndexers() reflector.Indexers[T] {
	out := reflector.Indexers[T]{}
	for name, f := range x.ix.GetIndexers() {
		out[name] = func(obj T) ([]string, error) { return f(obj) }
	}
	return out
}

// AddIndexers adds functions of T to the informer's indexes.
func (x typedIndexer[T]) AddIndexers(ix reflector.Indexers[T]) error {
	in := make(reflector.Indexers[client.Object], len(ix))
	for name, f := range ix {
		in[name] = func(obj client.Object) ([]string, error) {
			t, ok := obj.(T)
			if !ok {
				return nil, fmt.Errorf("%w: %T in an informer of %v", ErrTypeMismatch, obj, reflect.TypeFor[T]())
			}
			return f(t)
		}
	}
	return x.ix.AddIndexers(in)
}
