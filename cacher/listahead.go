package cacher

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// itemsAhead is a list's items being allocated on another goroutine while
// the cache is walked: allocating (and zeroing) the items of a large
// typed list takes about as long as copying them, and until now it could
// only start once the walk had said how many there are.
type itemsAhead struct {
	typ   reflect.Type // the items' slice type
	n     int          // their expected number
	slack int          // how far the walk may find more or fewer and still use them
	done  chan reflect.Value
}

// aheadSlack is the share of the expected items by which a walk may differ
// (objects created or deleted since the count) and still fill the items
// allocated ahead: they are allocated that much longer.
const aheadSlack = 64

// allocAhead starts allocating the items of listObj for a list of every
// object of the resource (recursive, at RV "" or "0", no selector, limit
// or continue token), of which the cache holds n now; nil when the list
// is of another kind, or too small for the allocation to matter.
func (c *Cacher) allocAhead(listObj apiruntime.Object, prefix string, opts storage.ListOptions) *itemsAhead {
	p := &opts.Predicate
	if !opts.Recursive || (opts.ResourceVersion != "" && opts.ResourceVersion != "0") || p.Limit != 0 ||
		p.Continue != "" || !p.Empty() || prefix != recursivePrefix(c.cfg.ResourcePrefix) || !c.trusted() {
		return nil
	}
	st := c.cache.Stats()
	if st.Objects < 2*fillChunk {
		return nil
	}
	ptr, err := meta.GetItemsPtr(listObj)
	if err != nil {
		return nil
	}
	t := reflect.TypeOf(ptr).Elem()
	if t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	a := &itemsAhead{typ: t, n: st.Objects, slack: st.Objects / aheadSlack, done: make(chan reflect.Value, 1)}
	go func() { a.done <- reflect.MakeSlice(t, a.n+a.slack, a.n+a.slack) }()
	return a
}

// take returns n items of type t from those allocated ahead, once, when n
// is within the slack of the expected number; otherwise false, without
// waiting (the allocation, if under way, becomes garbage).
func (a *itemsAhead) take(t reflect.Type, n int) (reflect.Value, bool) {
	if a == nil || a.done == nil || a.typ != t || n < a.n-a.slack || n > a.n+a.slack {
		return reflect.Value{}, false
	}
	out := <-a.done
	a.done = nil
	return out.Slice(0, n), true
}
