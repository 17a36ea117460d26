package wire

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// TestEventEncoderSharesLines: watchers given one change's encodings
// (storage.EncodedObject) share one line per event type, made once; an
// unwrapped object is encoded per call.
func TestEventEncoderSharesLines(t *testing.T) {
	k := NewKind("demo.listwatch.dev/v1", "Widget")
	e := &EventEncoder{}
	obj := widget("ns", "a")
	shared := storage.NewEncodings("", nil)
	ev := watch.Event{Type: watch.Added, Object: &storage.EncodedObject{Object: obj, Encodings: shared}}

	var wg sync.WaitGroup
	lines := make([][]byte, 8)
	for i := range lines {
		// Each watcher has its own wrapper of the change's encodings.
		ev := watch.Event{Type: ev.Type, Object: &storage.EncodedObject{Object: obj, Encodings: shared}}
		wg.Go(func() {
			b, err := e.Line(ev, k)
			require.NoError(t, err)
			lines[i] = b
		})
	}
	wg.Wait()
	for _, b := range lines {
		require.Same(t, &lines[0][0], &b[0], "every watcher shares one encoding")
	}
	require.Equal(t, int64(1), e.Encodes.Load())
	require.JSONEq(t, `{"type":"ADDED","object":`+string(mustJSON(t, obj))+`}`, string(lines[0]))

	// Another type of event for the same object is another line.
	mod, err := e.Line(watch.Event{Type: watch.Modified, Object: ev.Object}, k)
	require.NoError(t, err)
	require.Contains(t, string(mod), `"type":"MODIFIED"`)
	require.Equal(t, int64(2), e.Encodes.Load())

	// Without a carrier, every call encodes on its own.
	a, err := e.Line(watch.Event{Type: watch.Added, Object: obj}, k)
	require.NoError(t, err)
	b, err := e.Line(watch.Event{Type: watch.Added, Object: obj}, k)
	require.NoError(t, err)
	require.NotSame(t, &a[0], &b[0])
	require.Equal(t, string(lines[0]), string(a))
}

// TestEventEncoderUsesCachedJSON: a change whose encodings hold the
// object's JSON in the resource's format (a cacher with CacheCodec) gets
// its line from those bytes, not from encoding the object.
func TestEventEncoderUsesCachedJSON(t *testing.T) {
	k := NewKind("demo.listwatch.dev/v1", "Widget")
	codec := NewCodec(k)
	obj := widget("ns", "a")
	// Bytes that differ from obj's encoding show where the line came from.
	cached := []byte(`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"cached"}}`)
	ev := watch.Event{Type: watch.Deleted, Object: &storage.EncodedObject{Object: obj,
		Encodings: storage.NewEncodings(codec.Format(), cached)}}
	line, err := (&EventEncoder{}).Line(ev, k)
	require.NoError(t, err)
	require.Equal(t, `{"type":"DELETED","object":`+string(cached)+"}\n", string(line))

	// The codec's encoding is the object part of the server's own line.
	enc, err := codec.Encode(obj)
	require.NoError(t, err)
	plain, err := k.EncodeEvent(watch.Event{Type: watch.Deleted, Object: obj})
	require.NoError(t, err)
	require.Equal(t, `{"type":"DELETED","object":`+string(enc)+"}\n", string(plain))
}

func TestBookmarkEncoding(t *testing.T) {
	k := NewKind("demo.listwatch.dev/v1", "Widget")
	bm := &unstructured.Unstructured{}
	bm.SetResourceVersion("42")
	bm.SetAnnotations(map[string]string{"k8s.io/initial-events-end": "true"})
	b, err := (&EventEncoder{}).Line(watch.Event{Type: watch.Bookmark, Object: bm}, k)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"BOOKMARK","object":{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget",
		"metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}}`, string(b))
}

func widget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("demo.listwatch.dev/v1")
	u.SetKind("Widget")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func mustJSON(tb testing.TB, u *unstructured.Unstructured) []byte {
	tb.Helper()
	b, err := u.MarshalJSON()
	require.NoError(tb, err)
	return b
}
