package server

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkWriteBookkeeping measures what a write costs in CPU besides
// storage, per object (a Widget with a 1 KiB payload): validation against
// the schema, recording managedFields for an update, and merging a
// server-side apply patch.
func BenchmarkWriteBookkeeping(b *testing.B) {
	f := newFixture(b, withWidgetSchema)
	r := f.srv.resources[group+"/v1/widgets"]
	cur := &unstructured.Unstructured{Object: testWidget("ns", "w1", map[string]string{"app": "a"}, "n1")}
	cur.Object["spec"] = map[string]any{"nodeName": "n1", "replicas": int64(1), "data": strings.Repeat("x", 1024)}
	cur.SetResourceVersion("5")
	cur = r.RecordUpdate(r.EmptyObject(), cur, "creator")
	next := cur.DeepCopy()
	next.Object["spec"].(map[string]any)["replicas"] = int64(2)
	patch := map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": "ns"}, "spec": map[string]any{"color": "blue"}}

	b.Run("validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if errs := r.ValidationErrors(next.Object); len(errs) > 0 {
				b.Fatal(errs)
			}
		}
	})
	b.Run("managedFields-update", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r.RecordUpdate(cur, next.DeepCopy(), "updater")
		}
	})
	b.Run("apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.Apply(cur, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(patch)}, "applier", false); err != nil {
				b.Fatal(err)
			}
		}
	})
}
