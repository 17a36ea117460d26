package wire

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Kind is how the objects of one resource look on the wire: their
// apiVersion and kind, and the names of the JSON encodings the server
// shares through storage.Encodings for them: their objects' (what Codec
// writes, see storage.FormatNamer) and their watch events' lines by type.
type Kind struct {
	apiVersion, kind         string
	object                   string
	added, modified, deleted string
}

// NewKind returns the Kind of the objects of kind in apiVersion (a group
// version such as "demo.listwatch.dev/v1").
func NewKind(apiVersion, kind string) *Kind {
	obj := "listwatch.dev/server-json;" + apiVersion + ";" + kind
	return &Kind{apiVersion: apiVersion, kind: kind, object: obj, added: obj + ";watch=" + string(watch.Added),
		modified: obj + ";watch=" + string(watch.Modified), deleted: obj + ";watch=" + string(watch.Deleted)}
}

// APIVersion is the objects' apiVersion.
func (k *Kind) APIVersion() string { return k.apiVersion }

// Kind is the objects' kind.
func (k *Kind) Kind() string { return k.kind }

// ObjectFormat names the format of the objects' JSON as AppendObject
// writes it (see storage.FormatNamer).
func (k *Kind) ObjectFormat() string { return k.object }

// lineFormat names the format of an event line of type typ, "" for a type
// that carries no object of the resource.
func (k *Kind) lineFormat(typ watch.EventType) string {
	switch typ {
	case watch.Added:
		return k.added
	case watch.Modified:
		return k.modified
	case watch.Deleted:
		return k.deleted
	}
	return ""
}

// AppendObject appends the encoding of an unstructured object to b,
// filling apiVersion and kind when the stored object lacks them.
func (k *Kind) AppendObject(b []byte, u *unstructured.Unstructured) ([]byte, error) {
	obj := u.Object
	if _, ok := obj["kind"]; !ok || obj["apiVersion"] == nil {
		obj = k.WithTypeMeta(obj)
	}
	return AppendJSON(b, obj)
}

// WithTypeMeta returns a shallow copy of obj with apiVersion and kind set.
func (k *Kind) WithTypeMeta(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj)+2)
	for key, v := range obj {
		out[key] = v
	}
	out["apiVersion"] = k.apiVersion
	out["kind"] = k.kind
	return out
}

// EventEncoder writes watch events as the lines of a watch stream.
//
// A store that implements storage.EncodedWatcher (the cacher) delivers
// the objects of a change wrapped in a *storage.EncodedObject whose
// Encodings every watcher of that change shares: the first HTTP watcher
// to reach the event makes its line, in the format named after the
// resource and the event type (see Kind), and the others write the same
// bytes. When the store keeps the object's JSON already, by the
// resource's Codec, the line is made from those bytes with no encoding at
// all. Objects that come unwrapped (other stores, events the cacher
// relays from etcd) are encoded per watcher. The shared bytes must not be
// modified, and the objects neither (the storage contract for watch
// events).
type EventEncoder struct {
	// Encodes counts the lines made from shared encodings (for tests and
	// benchmarks: with a sharing store it grows once per event, not once
	// per watcher).
	Encodes atomic.Int64
}

// Line returns the wire form of ev for objects of k: one JSON
// {"type":..,"object":..} followed by a newline. The returned slice may be
// shared and must not be modified.
func (e *EventEncoder) Line(ev watch.Event, k *Kind) ([]byte, error) {
	o, ok := ev.Object.(*storage.EncodedObject)
	if !ok {
		return k.EncodeEvent(ev)
	}
	ev.Object = o.Object
	format := k.lineFormat(ev.Type)
	if format == "" {
		return k.EncodeEvent(ev)
	}
	return o.Encodings.Get(format, func() ([]byte, error) {
		e.Encodes.Add(1)
		obj, err := o.Encodings.Get(k.object, func() ([]byte, error) { return k.appendEventObject(nil, ev) })
		if err != nil {
			return nil, err
		}
		b := make([]byte, 0, len(obj)+len(ev.Type)+len(`{"type":"","object":}`)+1)
		b = appendEventHead(b, ev.Type)
		b = append(b, obj...)
		return append(b, "}\n"...), nil
	})
}

// EncodeEvent encodes ev's line on its own. Bookmarks are sent as an
// object of the resource's kind carrying only resourceVersion (and the
// initial-events-end annotation when present), as Kubernetes sends them.
func (k *Kind) EncodeEvent(ev watch.Event) ([]byte, error) {
	b := appendEventHead(make([]byte, 0, 1024), ev.Type)
	b, err := k.appendEventObject(b, ev)
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
// what AppendObject writes.
func (k *Kind) appendEventObject(b []byte, ev watch.Event) ([]byte, error) {
	var obj any
	switch o := ev.Object.(type) {
	case *unstructured.Unstructured:
		if ev.Type != watch.Bookmark {
			return k.AppendObject(b, o)
		}
		obj = k.bookmarkObject(o)
	case *metav1.Status:
		st := *o
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		obj = &st
	default:
		obj = o
		if ev.Type == watch.Bookmark {
			obj = k.bookmarkObject(o)
		}
	}
	return AppendJSON(b, obj)
}

func (k *Kind) bookmarkObject(o runtime.Object) map[string]any {
	md := map[string]any{}
	if acc, err := meta.Accessor(o); err == nil {
		md["resourceVersion"] = acc.GetResourceVersion()
		if a := acc.GetAnnotations(); len(a) > 0 {
			ann := make(map[string]any, len(a))
			for key, v := range a {
				ann[key] = v
			}
			md["annotations"] = ann
		}
	}
	return map[string]any{"apiVersion": k.apiVersion, "kind": k.kind, "metadata": md}
}
