package storage

import (
	"bytes"
	"context"
	"io"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// FormatNamer is implemented by codecs that name the format of their
// encodings. Two codecs with the same name must encode equal objects to
// equal bytes, and encode the whole object, resourceVersion included: a
// store keeping encodings by such a codec can hand them to readers asking
// for that format instead of them encoding the object again.
type FormatNamer interface {
	// Format names the format, "" for none.
	Format() string
}

// EncodedLister is implemented by stores that keep their objects encoded
// (a cacher with a codec) and can answer a list with those encodings, in
// the format their codec names (see FormatNamer).
type EncodedLister interface {
	// EncodedFormat is the format of the encodings GetListEncoded returns,
	// "" when the store keeps no encodings or its codec names no format.
	EncodedFormat() string
	// GetListEncoded is GetList with the items as the store's encodings,
	// which callers must not modify. It reports false, having done
	// nothing, when the store cannot answer this list with its encodings;
	// the caller then calls GetList.
	GetListEncoded(ctx context.Context, key string, opts ListOptions) (EncodedList, bool, error)
}

// EncodedWatcher is implemented by stores whose watch events can carry
// their object's encodings, made once and shared by every watcher of the
// change (as a cacher's watchers share one object per change).
type EncodedWatcher interface {
	// WatchEncoded is Watch, but the object of an ADDED, MODIFIED or
	// DELETED event may be an *EncodedObject wrapping it. Callers that
	// encode events ask it for the encoding in their format; callers that
	// need the object take EncodedObject.Object.
	WatchEncoded(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)
}

// EncodedObject is a watch event's object with the encodings of that
// object. Every watcher that receives the same change gets the same
// Encodings, so an encoding is made by the first watcher that asks for
// its format and reused by the others. The object must not be modified,
// as any object a watch delivers.
//
// It is a runtime.CacheableObject, so k8s.io/apimachinery's encoders (and
// k8s.io/apiserver's watch encoder) keep their encodings in the shared
// Encodings too, one per encoder identifier.
type EncodedObject struct {
	// Object is the event's object.
	Object runtime.Object
	// Encodings are Object's encodings; never nil.
	Encodings *Encodings
}

// GetObjectKind returns the wrapped object's kind.
func (o *EncodedObject) GetObjectKind() schema.ObjectKind { return o.Object.GetObjectKind() }

// DeepCopyObject returns a deep copy of the wrapped object (not wrapped:
// a copy may be modified, so no encoding of the original applies to it).
func (o *EncodedObject) DeepCopyObject() runtime.Object { return o.Object.DeepCopyObject() }

var _ runtime.CacheableObject = (*EncodedObject)(nil)

// CacheEncode implements runtime.CacheableObject: it writes to w the
// encoding of the object by the encoder that id names, kept in Encodings
// under the format string(id) (an apimachinery identifier names its
// encoder's output as a FormatNamer's format does). The first caller of
// an id makes it with encode, which gets a deep copy of Object (encoders
// may set the kind of what they encode while they work); every other
// caller, of this wrapper or of any other sharing its Encodings, gets
// those bytes, also the error encode returned.
func (o *EncodedObject) CacheEncode(id runtime.Identifier, encode func(runtime.Object, io.Writer) error, w io.Writer) error {
	data, err := o.Encodings.Get(string(id), func() ([]byte, error) {
		var buf bytes.Buffer
		if err := encode(o.Object.DeepCopyObject(), &buf); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	})
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// GetObject implements runtime.CacheableObject: the wrapped object, as a
// deep copy the caller owns (apimachinery's contract: callers that cannot
// use an encoding, such as a conversion to a table, modify what they get).
func (o *EncodedObject) GetObject() runtime.Object { return o.Object.DeepCopyObject() }

// Encodings holds encodings of one object, at most one per format, each
// made once however many goroutines ask for it at the same time. Safe for
// concurrent use.
type Encodings struct {
	mu      sync.Mutex
	entries []*encoding // guarded by mu; few formats per object
}

// encoding is one format's bytes, made by the first caller.
type encoding struct {
	format string
	once   sync.Once
	data   []byte
	err    error
}

// NewEncodings returns Encodings holding data as the encoding in format;
// with format "" it holds none.
func NewEncodings(format string, data []byte) *Encodings {
	e := &Encodings{}
	if format != "" {
		en := &encoding{format: format, data: data}
		en.once.Do(func() {})
		e.entries = append(e.entries, en)
	}
	return e
}

// Get returns the encoding in format, calling encode to make it when no
// caller made it before. The bytes are shared: callers must not modify
// them. An encode error is returned to every caller of that format.
func (e *Encodings) Get(format string, encode func() ([]byte, error)) ([]byte, error) {
	e.mu.Lock()
	var en *encoding
	for _, x := range e.entries {
		if x.format == format {
			en = x
			break
		}
	}
	if en == nil {
		en = &encoding{format: format}
		e.entries = append(e.entries, en)
	}
	e.mu.Unlock()
	en.once.Do(func() { en.data, en.err = encode() })
	return en.data, en.err
}
