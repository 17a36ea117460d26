package k8scompat

import (
	"bytes"
	"context"
	"io"
	"sync"

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
type cachingObject struct {
	mu  sync.Mutex
	obj runtime.Object
	enc map[runtime.Identifier]*encoding
}

// encoding is one identifier's encoding of a cachingObject.
type encoding struct {
	once sync.Once
	data []byte
	err  error
}

var _ runtime.CacheableObject = (*cachingObject)(nil)

func newCachingObject(obj runtime.Object) *cachingObject {
	return &cachingObject{obj: obj}
}

// CacheEncode implements runtime.CacheableObject.
func (c *cachingObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	c.mu.Lock()
	if c.enc == nil {
		c.enc = make(map[runtime.Identifier]*encoding, 1)
	}
	e, ok := c.enc[id]
	if !ok {
		e = &encoding{}
		c.enc[id] = e
	}
	obj := c.obj
	c.mu.Unlock()
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
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.obj.DeepCopyObject()
}

// DeepCopyObject implements runtime.Object: a deep copy of the object.
func (c *cachingObject) DeepCopyObject() runtime.Object { return c.GetObject() }

// GetObjectKind implements runtime.Object.
func (c *cachingObject) GetObjectKind() schema.ObjectKind { return c }

// GroupVersionKind implements schema.ObjectKind.
func (c *cachingObject) GroupVersionKind() schema.GroupVersionKind {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.obj.GetObjectKind().GroupVersionKind()
}

// SetGroupVersionKind implements schema.ObjectKind: the wrapper takes a
// copy of the object with the kind set and forgets its encodings; the
// object it wrapped is left as it was (other holders may share it).
func (c *cachingObject) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obj.GetObjectKind().GroupVersionKind() == gvk {
		return
	}
	obj := c.obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	c.obj, c.enc = obj, nil
}

// encodingShare hands out one cachingObject per object for the watchers of
// a Store, so that the watchers an event is dispatched to (the cacher gives
// them the same object) share its encodings. It remembers the wrappers of
// the last shareWindow objects.
type encodingShare struct {
	mu   sync.Mutex
	m    map[runtime.Object]*cachingObject
	ring []runtime.Object
	next int
}

const shareWindow = 4096

func newEncodingShare() *encodingShare {
	return &encodingShare{m: make(map[runtime.Object]*cachingObject, shareWindow), ring: make([]runtime.Object, shareWindow)}
}

// wrap returns the wrapper of obj.
func (s *encodingShare) wrap(obj runtime.Object) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	if co, ok := s.m[obj]; ok {
		return co
	}
	co := newCachingObject(obj)
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
