package server

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// eventEncoder writes watch events as the lines of a watch stream.
//
// A store that implements storage.EncodedWatcher (the cacher) delivers
// the objects of a change wrapped in a *storage.EncodedObject whose
// Encodings every watcher of that change shares: the first HTTP watcher
// to reach the event makes its line, in the format named after the
// resource and the event type (see wireFormats), and the others write the
// same bytes. When the store keeps the object's JSON already, by the
// resource's CacheCodec, the line is made from those bytes with no
// encoding at all. Objects that come unwrapped (other stores, events the
// cacher relays from etcd) are encoded per watcher. The shared bytes must
// not be modified, and the objects neither (the storage contract for
// watch events).
type eventEncoder struct {
	// encodes counts the lines made from shared encodings (for tests and
	// benchmarks: with a sharing store it grows once per event, not once
	// per watcher).
	encodes atomic.Int64
}

// line returns the wire form of ev for resource r: one JSON
// {"type":..,"object":..} followed by a newline. The returned slice may be
// shared and must not be modified.
func (e *eventEncoder) line(ev watch.Event, r *resource) ([]byte, error) {
	o, ok := ev.Object.(*storage.EncodedObject)
	if !ok {
		return encodeEvent(ev, r)
	}
	ev.Object = o.Object
	format := r.wire.line(ev.Type)
	if format == "" {
		return encodeEvent(ev, r)
	}
	return o.Encodings.Get(format, func() ([]byte, error) {
		e.encodes.Add(1)
		obj, err := o.Encodings.Get(r.wire.object, func() ([]byte, error) { return appendEventObject(nil, ev, r) })
		if err != nil {
			return nil, err
		}
		b := make([]byte, 0, len(obj)+len(ev.Type)+len(`{"type":"","object":}`)+1)
		b = appendEventHead(b, ev.Type)
		b = append(b, obj...)
		return append(b, "}\n"...), nil
	})
}

// wireFormats name the JSON encodings the server shares through
// storage.Encodings for one resource: its objects' (what CacheCodec
// writes, see storage.FormatNamer) and its watch events' lines by type.
type wireFormats struct {
	object                   string
	added, modified, deleted string
}

// newWireFormats names the formats of the objects of kind in gv.
func newWireFormats(gv, kind string) wireFormats {
	obj := "listwatch.dev/server-json;" + gv + ";" + kind
	return wireFormats{object: obj, added: obj + ";watch=" + string(watch.Added),
		modified: obj + ";watch=" + string(watch.Modified), deleted: obj + ";watch=" + string(watch.Deleted)}
}

// line names the format of an event line of type typ, "" for a type that
// carries no object of the resource.
func (f *wireFormats) line(typ watch.EventType) string {
	switch typ {
	case watch.Added:
		return f.added
	case watch.Modified:
		return f.modified
	case watch.Deleted:
		return f.deleted
	}
	return ""
}

// encodeEvent encodes ev's line on its own. Bookmarks are sent as an
// object of the resource's kind carrying only resourceVersion (and the
// initial-events-end annotation when present), as Kubernetes sends them.
func encodeEvent(ev watch.Event, r *resource) ([]byte, error) {
	b := appendEventHead(make([]byte, 0, 1024), ev.Type)
	b, err := appendEventObject(b, ev, r)
	if err != nil {
		return nil, err
	}
	return append(b, "}\n"...), nil
}

// appendEventHead appends the start of an event line, up to its object.
func appendEventHead(b []byte, typ watch.EventType) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	return append(b, `","object":`...)
}

// appendEventObject appends the JSON of ev's object as an event line
// carries it: for ADDED, MODIFIED and DELETED of an unstructured object,
// what appendObject writes.
func appendEventObject(b []byte, ev watch.Event, r *resource) ([]byte, error) {
	var obj any
	switch o := ev.Object.(type) {
	case *unstructured.Unstructured:
		if ev.Type != watch.Bookmark {
			return appendObject(b, o, r)
		}
		obj = bookmarkObject(o, r)
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
	return wire.AppendJSON(b, obj)
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
