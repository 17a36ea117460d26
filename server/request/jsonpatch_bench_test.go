package request

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/server/wire"
)

// BenchmarkJSONPatch measures applying a three-operation RFC 6902 patch
// to a Widget with a 1 KiB payload, as servePatch does (from the stored
// object's map, copied as servePatch copies it, to the patched map).
func BenchmarkJSONPatch(b *testing.B) {
	patch := []byte(`[{"op":"test","path":"/metadata/name","value":"w1"},{"op":"replace","path":"/spec/replicas","value":3},{"op":"add","path":"/metadata/labels/tier","value":"web"}]`)
	apply, err := (&Write{Body: patch, MediaType: wire.MediaJSONPatch}).Patcher(3 << 20)
	if err != nil {
		b.Fatal(err)
	}
	doc := map[string]any{"apiVersion": "demo.listwatch.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"namespace": "ns", "name": "w1", "labels": map[string]any{"app": "a"}},
		"spec":     map[string]any{"nodeName": "n1"}}
	doc["spec"].(map[string]any)["data"] = strings.Repeat("x", 1024)
	doc["spec"].(map[string]any)["replicas"] = int64(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := apply(runtime.DeepCopyJSON(doc)); err != nil {
			b.Fatal(err)
		}
	}
}
