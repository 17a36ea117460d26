package server

import (
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// encodeCache shares the encoded bytes of a watch event among every HTTP
// watcher that receives the same event object.
//
// The cacher hands the same object pointer to every watcher an event is
// dispatched to, so the first watcher to reach an event encodes it and
// the others find the line by (object pointer, event type, resource). The cache
// holds the last size events in a ring; an entry keeps its object
// reachable, so a pointer cannot be reused for another object while its
// entry exists. Watchers further behind than size events, and stores that
// give each watcher its own objects (the etcd3 store), simply encode
// again: sharing is an optimisation, never needed for correctness. The
// stored objects must not be modified after they are delivered (the
// storage contract for watch events).
type encodeCache struct {
	mu      sync.Mutex
	entries map[cacheKey]*encodedEvent // guarded by mu
	ring    []cacheKey                 // guarded by mu; insertion order
	next    int                        // guarded by mu; next ring slot to reuse
	// encodes counts the events encoded through the cache (for tests and
	// benchmarks: with a sharing store it grows once per event, not once
	// per watcher).
	encodes atomic.Int64
}

type cacheKey struct {
	obj runtime.Object
	typ watch.EventType
	res *resource // the encoding may fill in the resource's kind
}

// encodedEvent is one event line, encoded once by whoever gets it first.
type encodedEvent struct {
	once sync.Once
	line []byte
	err  error
}

// newEncodeCache returns a cache of size events; size < 0 disables it.
func newEncodeCache(size int) *encodeCache {
	if size < 0 {
		return nil
	}
	return &encodeCache{entries: make(map[cacheKey]*encodedEvent, size), ring: make([]cacheKey, size)}
}

// line returns the wire form of ev for resource r: one JSON
// {"type":..,"object":..} followed by a newline. The returned slice is
// shared and must not be modified.
func (c *encodeCache) line(ev watch.Event, r *resource) ([]byte, error) {
	if c == nil || ev.Type == watch.Bookmark || ev.Type == watch.Error || !isPointer(ev.Object) {
		return encodeEvent(ev, r)
	}
	k := cacheKey{obj: ev.Object, typ: ev.Type, res: r}
	c.mu.Lock()
	e := c.entries[k]
	if e == nil {
		e = &encodedEvent{}
		if old := c.ring[c.next]; old.obj != nil {
			delete(c.entries, old)
		}
		c.ring[c.next] = k
		c.next = (c.next + 1) % len(c.ring)
		c.entries[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		c.encodes.Add(1)
		e.line, e.err = encodeEvent(ev, r)
	})
	return e.line, e.err
}

func isPointer(obj runtime.Object) bool {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return true
	}
	return obj != nil && reflect.TypeOf(obj).Kind() == reflect.Pointer
}

// encodeEvent encodes ev without the cache. Bookmarks are sent as an
// object of the resource's kind carrying only resourceVersion (and the
// initial-events-end annotation when present), as Kubernetes sends them.
func encodeEvent(ev watch.Event, r *resource) ([]byte, error) {
	var obj any
	switch o := ev.Object.(type) {
	case *unstructured.Unstructured:
		obj = o.Object
		if ev.Type == watch.Bookmark {
			obj = bookmarkObject(o, r)
		} else if _, ok := o.Object["kind"]; !ok || o.Object["apiVersion"] == nil {
			obj = withTypeMeta(o.Object, r)
		}
	case *metav1.Status:
		st := *o
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		obj = &st
	default:
		obj = o
		if ev.Type == watch.Bookmark {
			obj = bookmarkObject(o, r)
		}
	}
	b := make([]byte, 0, 1024)
	b = append(b, `{"type":"`...)
	b = append(b, ev.Type...)
	b = append(b, `","object":`...)
	b, err := appendJSON(b, obj)
	if err != nil {
		return nil, err
	}
	return append(b, "}\n"...), nil
}

func bookmarkObject(o runtime.Object, r *resource) map[string]any {
	md := map[string]any{}
	if acc, err := meta.Accessor(o); err == nil {
		md["resourceVersion"] = acc.GetResourceVersion()
		if a := acc.GetAnnotations(); len(a) > 0 {
			ann := make(map[string]any, len(a))
			for k, v := range a {
				ann[k] = v
			}
			md["annotations"] = ann
		}
	}
	return map[string]any{"apiVersion": r.gvString, "kind": r.Kind, "metadata": md}
}

// errorLine encodes an ERROR event carrying the status of err.
func errorLine(err error, r *resource) []byte {
	st := statusFor(err)
	b, _ := encodeEvent(watch.Event{Type: watch.Error, Object: &st}, r)
	return b
}
