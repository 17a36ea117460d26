package watchcache

import (
	"errors"
	"runtime"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/equality"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

// widgetCodec keeps test widgets encoded as JSON; it counts decodings.
type widgetCodec struct {
	decodes   int
	failWrite bool
}

func (c *widgetCodec) Encode(obj k8sruntime.Object) ([]byte, error) {
	if c.failWrite {
		return nil, errors.New("encoder broken")
	}
	return k8sruntime.Encode(widget.Codec, obj)
}

func (c *widgetCodec) Decode(data []byte, _ uint64) (k8sruntime.Object, error) {
	c.decodes++
	obj, _, err := widget.Codec.Decode(data, nil, &widget.Widget{})
	return obj, err
}

func encodedCache(t testing.TB, codec Codec) *Cache {
	c, _ := newTestCache(t, func(cfg *Config) { cfg.Codec = codec })
	return c
}

// TestEncodedElementRoundTrips: an element of a cache with a Codec holds
// the codec's encoding and gives back an object equal to the one stored,
// resourceVersion included.
func TestEncodedElementRoundTrips(t *testing.T) {
	codec := &widgetCodec{}
	c := encodedCache(t, codec)
	w := testWidget("ns", "a", 7, map[string]string{"app": "x"})
	want := w.DeepCopy()
	ev := mustApply(t, c, "add", w, 7)
	raw, ok := ev.Cur.Encoded()
	if !ok {
		t.Fatal("Encoded: false for a cache with a Codec")
	}
	enc, err := k8sruntime.Encode(widget.Codec, want)
	if err != nil || string(raw) != string(enc) {
		t.Fatalf("Encoded = %s, want %s (%v)", raw, enc, err)
	}
	w = nil
	runtime.GC()
	obj := mustObject(t, ev.Cur)
	if !equality.Semantic.DeepEqual(obj, want) {
		t.Fatalf("Object = %#v, want %#v", obj, want)
	}
	if codec.decodes != 1 {
		t.Fatalf("decodes = %d, want 1 (the stored object was dropped)", codec.decodes)
	}

	plain, _ := newTestCache(t, nil)
	ev = mustApply(t, plain, "add", testWidget("ns", "a", 7, nil), 7)
	if _, ok := ev.Cur.Encoded(); ok {
		t.Fatal("Encoded: true for a cache without a Codec")
	}
}

// TestEncodedElementSharesHotObject: while anything references an element's
// object, readers share it; once nothing does, one read decodes and the
// readers after it share that decoding.
func TestEncodedElementSharesHotObject(t *testing.T) {
	codec := &widgetCodec{}
	c := encodedCache(t, codec)
	w := testWidget("ns", "a", 7, map[string]string{"app": "x"})
	ev := mustApply(t, c, "add", w, 7)
	for range 3 {
		runtime.GC()
		if got := mustObject(t, ev.Cur); got != k8sruntime.Object(w) {
			t.Fatalf("Object() = %p, want the stored object %p while it is referenced", got, w)
		}
	}
	if codec.decodes != 0 {
		t.Fatalf("decodes = %d while the stored object lives", codec.decodes)
	}
	runtime.KeepAlive(w)
	w = nil
	runtime.GC()
	first := mustObject(t, ev.Cur)
	second := mustObject(t, ev.Cur)
	if first != second || codec.decodes != 1 {
		t.Fatalf("after the stored object died: %p, %p, %d decodes; want one shared decoding", first, second, codec.decodes)
	}
	runtime.KeepAlive(first)
}

// TestEncodeFailureChangesNothing: an object the Codec cannot encode is
// refused with an error, and the cache is unchanged.
func TestEncodeFailureChangesNothing(t *testing.T) {
	codec := &widgetCodec{}
	c := encodedCache(t, codec)
	if err := c.Replace([]k8sruntime.Object{testWidget("ns", "a", 7, nil)}, 7); err != nil {
		t.Fatal(err)
	}
	codec.failWrite = true
	if _, err := c.Apply(watchType("mod"), testWidget("ns", "a", 8, nil), 8); err == nil {
		t.Fatal("Apply with a failing encoder: no error")
	}
	if err := c.Replace([]k8sruntime.Object{testWidget("ns", "b", 9, nil)}, 9); err == nil {
		t.Fatal("Replace with a failing encoder: no error")
	}
	if st := c.Stats(); st.Objects != 1 || st.Events != 0 || st.RV != 7 {
		t.Fatalf("stats after refused writes: %+v", st)
	}
	el, _, ok, err := c.Get("/widgets/ns/a")
	if err != nil || !ok || el.RV != 7 {
		t.Fatalf("Get: %v %v %v", el, ok, err)
	}
}

// TestElementSize guards the element's size class: 96 bytes, the class an
// encoded element's memory budget is counted with.
func TestElementSize(t *testing.T) {
	if n := unsafe.Sizeof(Element{}); n > 96 {
		t.Fatalf("Element is %d bytes, want at most 96", n)
	}
}
