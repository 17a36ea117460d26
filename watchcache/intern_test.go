package watchcache

import (
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

func mapID(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }

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

func TestLabelTableIsBounded(t *testing.T) {
	var in labelInterner
	for i := range maxInternedLabelSets + 10 {
		in.share(map[string]string{"i": fmt.Sprint(i)})
	}
	if n := len(in.sets); n > maxInternedLabelSets {
		t.Fatalf("%d label sets kept", n)
	}
}

func TestCompactConcurrently(t *testing.T) {
	var in compactor
	var wg sync.WaitGroup
	objs := make([]*widget.Widget, 200)
	for i := range objs {
		objs[i] = testWidget("ns", fmt.Sprint(i), 1, map[string]string{"app": fmt.Sprint(i % 3)})
	}
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(objs); i += 4 {
				in.compact(objs[i])
			}
		})
	}
	wg.Wait()
	for i, o := range objs {
		if mapID(o.Labels) != mapID(objs[i%3].Labels) || o.Labels["app"] != fmt.Sprint(i%3) {
			t.Fatalf("object %d: labels %v not shared with object %d", i, o.Labels, i%3)
		}
	}
}

func TestNamesAreCanonical(t *testing.T) {
	var in compactor
	a := testWidget(strings.Clone("ns"), "a", 1, nil)
	b := testWidget(strings.Clone("ns"), "b", 1, nil)
	a.APIVersion, a.Kind = strings.Clone("demo/v1"), strings.Clone("Widget")
	b.APIVersion, b.Kind = strings.Clone("demo/v1"), strings.Clone("Widget")
	in.compact(a)
	in.compact(b)
	same := func(x, y string) bool { return x == y && unsafe.StringData(x) == unsafe.StringData(y) }
	if !same(a.Namespace, b.Namespace) || !same(a.APIVersion, b.APIVersion) || !same(a.Kind, b.Kind) {
		t.Fatalf("names not shared: %q %q %q", a.Namespace, a.APIVersion, a.Kind)
	}
	if a.Namespace != "ns" || a.APIVersion != "demo/v1" || a.Kind != "Widget" || a.Name != "a" {
		t.Fatalf("names changed: %+v", a.ObjectMeta)
	}
}
