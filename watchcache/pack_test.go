package watchcache

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

func mapID(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

func sameString(a, b string) bool { return a == b && unsafe.StringData(a) == unsafe.StringData(b) }

func TestEqualLabelsShareOneMap(t *testing.T) {
	c, _ := newTestCache(t, nil)
	a := testWidget("ns", "a", 1, map[string]string{"app": "x", "tier": "1"})
	b := testWidget("ns", "b", 2, map[string]string{"tier": "1", "app": "x"})
	d := testWidget("ns", "d", 3, map[string]string{"app": "x"})
	e := testWidget("ns", "e", 4, nil)
	u := widget.NewUnstructuredWidget("ns", "u", map[string]string{"app": "x", "tier": "1"})
	u.SetResourceVersion("5")
	if err := c.Replace([]runtime.Object{a, b, d, e, u}, 10); err != nil {
		t.Fatal(err)
	}
	if mapID(a.Labels) != mapID(b.Labels) {
		t.Fatal("equal label sets are not shared")
	}
	if mapID(a.Labels) == mapID(d.Labels) || !maps.Equal(d.Labels, map[string]string{"app": "x"}) {
		t.Fatal("different label sets are shared")
	}
	if !maps.Equal(b.Labels, map[string]string{"app": "x", "tier": "1"}) || e.Labels != nil {
		t.Fatalf("labels changed: %v %v", b.Labels, e.Labels)
	}
	el, _, _, _ := c.Get("/widgets/ns/b")
	if mapID(el.Labels) != mapID(a.Labels) {
		t.Fatal("the element's label set is not the object's")
	}
	// An event's object joins the table too.
	m := testWidget("ns", "m", 11, map[string]string{"app": "x", "tier": "1"})
	mustApply(t, c, "add", m, 11)
	if mapID(m.Labels) != mapID(a.Labels) {
		t.Fatal("an applied object's equal labels are not shared")
	}
	if got := u.GetLabels(); !maps.Equal(got, map[string]string{"app": "x", "tier": "1"}) {
		t.Fatalf("unstructured labels: %v", got)
	}
}

func TestNoPackingKeepsObjectsAsGiven(t *testing.T) {
	c, _ := newTestCache(t, func(cfg *Config) { cfg.NoPacking = true })
	a := testWidget("ns", "a", 1, map[string]string{"app": "x"})
	b := testWidget("ns", "b", 2, map[string]string{"app": "x"})
	if err := c.Replace([]runtime.Object{a, b}, 10); err != nil {
		t.Fatal(err)
	}
	if mapID(a.Labels) == mapID(b.Labels) {
		t.Fatal("labels shared with NoPacking")
	}
}

func TestApplySharesRepeatedAnnotations(t *testing.T) {
	c, _ := newTestCache(t, nil)
	if err := c.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 800)
	var objs []*widget.Widget
	for i := range 3 {
		w := testWidget("ns", fmt.Sprint("w", i), uint64(2+i), nil)
		w.Annotations = map[string]string{"pad": strings.Clone(pad), "seq": fmt.Sprint(i)}
		mustApply(t, c, "add", w, uint64(2+i))
		objs = append(objs, w)
	}
	if !sameString(objs[0].Annotations["pad"], objs[2].Annotations["pad"]) {
		t.Fatal("a repeated annotation value is not shared")
	}
	el, _, _, _ := c.Get("/widgets/ns/w2")
	obj, _ := el.Object()
	if got := obj.(*widget.Widget).Annotations; got["pad"] != pad || got["seq"] != "2" {
		t.Fatalf("annotations: %v", got)
	}
}

// TestNoPackingEncoded: with NoPacking an encoded cache keeps the same
// values, and each read of an element decodes it again (no weak pointer).
func TestNoPackingEncoded(t *testing.T) {
	codec := &widgetCodec{}
	c, _ := newTestCache(t, func(cfg *Config) { cfg.Codec, cfg.NoPacking = codec, true })
	w := testWidget("ns", "a", 7, map[string]string{"app": "x"})
	ev := mustApply(t, c, "add", w, 7)
	raw, ok := ev.Cur.Encoded()
	if enc, err := runtime.Encode(widget.Codec, w); !ok || err != nil || string(raw) != string(enc) {
		t.Fatalf("Encoded = %s, %v (%v)", raw, ok, err)
	}
	if ev.Cur.Key != "/widgets/ns/a" || ev.Cur.Fields.Get("spec.nodeName") != w.Spec.NodeName || ev.Cur.Labels["app"] != "x" {
		t.Fatalf("element: %+v", ev.Cur)
	}
	first, second := mustObject(t, ev.Cur), mustObject(t, ev.Cur)
	if first == second || codec.decodes != 2 {
		t.Fatalf("%d decodes, shared %v; want a decoding per read", codec.decodes, first == second)
	}
}
