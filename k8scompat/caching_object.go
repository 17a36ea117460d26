package k8scompat

import (
	"bytes"
	"context"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// cachingObject wraps an object of a watch event as a
// runtime.CacheableObject: the apiserver's encoders (JSON, protobuf, the
// watch event framing) hand it their encode function with an identifier,
// and each identifier's encoding is made once and then copied to every
// watcher that gets the same wrapper. The wrapped object is never
// modified: encodings are made from deep copies, and setting the kind
// replaces the object with a modified copy.
//
// Reads are lock-free: the object and its encodings are one immutable
// state, replaced as a whole (under mu) when an encoding is added or the
// kind changes.
type cachingObject struct {
	mu    sync.Mutex // serializes replacements of state
	state atomic.Pointer[cachingState]
}

// cachingState is the object a cachingObject wraps and the encodings made
// of it so far, one per identifier (an apiserver uses a handful).
type cachingState struct {
	obj  runtime.Object
	encs []*encoding
}

// encoding is one identifier's encoding of a cachingObject.
type encoding struct {
	id   runtime.Identifier
	once sync.Once
	data []byte
	err  error
}

var _ runtime.CacheableObject = (*cachingObject)(nil)

func newCachingObject(obj runtime.Object) *cachingObject {
	c := &cachingObject{}
	c.state.Store(&cachingState{obj: obj})
	return c
}

// find returns the encoding of id in st, or nil.
func (st *cachingState) find(id runtime.Identifier) *encoding {
	for _, e := range st.encs {
		if e.id == id {
			return e
		}
	}
	return nil
}

// encodingOf returns the encoding of id and the object it is made of,
// adding an empty one if there is none yet.
func (c *cachingObject) encodingOf(id runtime.Identifier) (*encoding, runtime.Object) {
	st := c.state.Load()
	if e := st.find(id); e != nil {
		return e, st.obj
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st = c.state.Load()
	if e := st.find(id); e != nil {
		return e, st.obj
	}
	e := &encoding{id: id}
	c.state.Store(&cachingState{obj: st.obj, encs: append(slices.Clip(st.encs), e)})
	return e, st.obj
}

// CacheEncode implements runtime.CacheableObject.
func (c *cachingObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	e, obj := c.encodingOf(id)
	e.once.Do(func() {
		var buf bytes.Buffer
		e.err = encode(obj.DeepCopyObject(), &buf)
		e.data = buf.Bytes()
	})
	if e.err != nil {
		return e.err
	}
	_, err := w.Write(e.data)
	return err
}

// GetObject implements runtime.CacheableObject: a deep copy of the object.
func (c *cachingObject) GetObject() runtime.Object {
	return c.state.Load().obj.DeepCopyObject()
}

// DeepCopyObject implements runtime.Object: a deep copy of the object.
func (c *cachingObject) DeepCopyObject() runtime.Object { return c.GetObject() }

// GetObjectKind implements runtime.Object.
func (c *cachingObject) GetObjectKind() schema.ObjectKind { return c }

// GroupVersionKind implements schema.ObjectKind.
func (c *cachingObject) GroupVersionKind() schema.GroupVersionKind {
	return c.state.Load().obj.GetObjectKind().GroupVersionKind()
}

// SetGroupVersionKind implements schema.ObjectKind: the wrapper takes a
// copy of the object with the kind set and forgets its encodings; the
// object it wrapped is left as it was (other holders may share it).
func (c *cachingObject) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state.Load()
	if st.obj.GetObjectKind().GroupVersionKind() == gvk {
		return
	}
	obj := st.obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	c.state.Store(&cachingState{obj: obj})
}

// encodingShare hands out one cachingObject per object for the watchers of
// a Store, so that the watchers an event is dispatched to (the cacher gives
// them the same object) share its encodings. It remembers the wrappers of
// the last shareWindow objects.
type encodingShare struct {
	// last is the most recent wrapping, read without the lock: the
	// watchers an event goes to ask for its wrapper one after another.
	last atomic.Pointer[sharedWrapper]
	mu   sync.Mutex
	m    map[runtime.Object]*cachingObject
	ring []runtime.Object
	next int
}

const shareWindow = 4096

// sharedWrapper is an object and its wrapper.
type sharedWrapper struct {
	obj runtime.Object
	co  *cachingObject
}

func newEncodingShare() *encodingShare {
	return &encodingShare{m: make(map[runtime.Object]*cachingObject, shareWindow), ring: make([]runtime.Object, shareWindow)}
}

// wrap returns the wrapper of obj.
func (s *encodingShare) wrap(obj runtime.Object) runtime.Object {
	if l := s.last.Load(); l != nil && l.obj == obj {
		return l.co
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if co, ok := s.m[obj]; ok {
		s.last.Store(&sharedWrapper{obj: obj, co: co})
		return co
	}
	co := newCachingObject(obj)
	s.last.Store(&sharedWrapper{obj: obj, co: co})
	if old := s.ring[s.next]; old != nil {
		delete(s.m, old)
	}
	s.ring[s.next] = obj
	s.next = (s.next + 1) % len(s.ring)
	s.m[obj] = co
	return co
}

// servesAPIClient reports whether ctx is the context of a request that
// k8s.io/apiserver's handlers serve to an API client (it carries their
// RequestInfo), whose encoders honour runtime.CacheableObject; other
// callers, such as a cacher over the Store, get the objects unwrapped.
func servesAPIClient(ctx context.Context) bool {
	_, ok := genericapirequest.RequestInfoFrom(ctx)
	return ok
}

// sharingWatch passes the events of a watch on, their objects wrapped by
// an encodingShare (bookmarks and errors as they are).
type sharingWatch struct {
	in    watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
	share *encodingShare
}

// sharingWatchBuffer is the capacity of a sharing watch's result channel.
const sharingWatchBuffer = 16

func newSharingWatch(in watch.Interface, share *encodingShare) *sharingWatch {
	w := &sharingWatch{in: in, out: make(chan watch.Event, sharingWatchBuffer), stop: make(chan struct{}), share: share}
	go w.run()
	return w
}

// run forwards events until the inner watch ends or Stop is called; it
// then drains the inner watch, which Stop ends, so its producer never blocks.
func (w *sharingWatch) run() {
	defer close(w.out)
	in := w.in.ResultChan()
	for ev := range in {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if ev.Object != nil {
				ev.Object = w.share.wrap(ev.Object)
			}
		}
		select {
		case w.out <- ev: // the usual case: the reader keeps up
			continue
		default:
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			for range in {
			}
			return
		}
	}
}

// ResultChan implements watch.Interface.
func (w *sharingWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface.
func (w *sharingWatch) Stop() {
	w.once.Do(func() {
		close(w.stop)
		w.in.Stop()
	})
}
