package watchcache

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestRuntimeCodecLeavesResourceVersionOut: with a Versioner, a cache's
// encodings leave the resourceVersion out, the object it was given keeps
// it, and decoding puts the element's RV back.
func TestRuntimeCodecLeavesResourceVersionOut(t *testing.T) {
	c := encodedCache(t, RuntimeCodec{Codec: widget.Codec, New: widget.New, Versioner: storage.APIObjectVersioner{}})
	w := testWidget("ns", "a", 42, map[string]string{"app": "x"})
	want := w.DeepCopy()
	ev := mustApply(t, c, "add", w, 42)
	raw, _ := ev.Cur.Encoded()
	if strings.Contains(string(raw), "resourceVersion") {
		t.Fatalf("encoding carries the resourceVersion: %s", raw)
	}
	if w.ResourceVersion != "42" {
		t.Fatalf("the stored object's resourceVersion changed to %q", w.ResourceVersion)
	}
	obj, err := RuntimeCodec{Codec: widget.Codec, New: widget.New, Versioner: storage.APIObjectVersioner{}}.Decode(raw, 42)
	if err != nil || !equality.Semantic.DeepEqual(obj, k8sruntime.Object(want)) {
		t.Fatalf("Decode = %#v, %v; want %#v", obj, err, want)
	}
}
