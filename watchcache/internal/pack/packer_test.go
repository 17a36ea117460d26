package pack

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// item is a small API object.
type item struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (i *item) DeepCopyObject() k8sruntime.Object { panic("not used") }

func newItem(ns, name string, lbls map[string]string) *item {
	return &item{TypeMeta: metav1.TypeMeta{APIVersion: "demo/v1", Kind: "Item"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

func TestPackerConcurrently(t *testing.T) {
	p := New()
	var wg sync.WaitGroup
	objs := make([]*item, 200)
	for i := range objs {
		objs[i] = newItem("ns", fmt.Sprint(i), map[string]string{"app": fmt.Sprint(i % 3)})
	}
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < len(objs); i += 4 {
				p.Object(objs[i])
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
	p := New()
	a := newItem(strings.Clone("ns"), "a", nil)
	b := newItem(strings.Clone("ns"), "b", nil)
	a.APIVersion, a.Kind = strings.Clone("demo/v1"), strings.Clone("Item")
	b.APIVersion, b.Kind = strings.Clone("demo/v1"), strings.Clone("Item")
	p.Object(a)
	p.Object(b)
	if !sameString(a.Namespace, b.Namespace) || !sameString(a.APIVersion, b.APIVersion) || !sameString(a.Kind, b.Kind) {
		t.Fatalf("names not shared: %q %q %q", a.Namespace, a.APIVersion, a.Kind)
	}
	if a.Namespace != "ns" || a.APIVersion != "demo/v1" || a.Kind != "Item" || a.Name != "a" {
		t.Fatalf("names changed: %+v", a.ObjectMeta)
	}
}

func TestLabelsShareEqualSets(t *testing.T) {
	p := New()
	a := p.Labels(map[string]string{"app": "x", "tier": "1"})
	b := p.Labels(map[string]string{"tier": "1", "app": "x"})
	c := p.Labels(map[string]string{"app": "x"})
	if mapID(a) != mapID(b) || mapID(a) == mapID(c) || len(c) != 1 {
		t.Fatalf("label sets: %v %v %v", a, b, c)
	}
	if p.Labels(nil) != nil {
		t.Fatal("an empty set became a map")
	}
}

func TestLabelTableIsBounded(t *testing.T) {
	var s syncMaps
	for i := range maxTableEntries + 10 {
		s.share(map[string]string{"i": fmt.Sprint(i)})
	}
	if s.t.n > maxTableEntries {
		t.Fatalf("%d label sets kept", s.t.n)
	}
}

// TestLayout: the three strings keep their values; they share one
// allocation when that is no larger, else each has its own.
func TestLayout(t *testing.T) {
	for _, tc := range []struct {
		enc, key, vals string
		joined         bool
	}{
		{strings.Repeat("e", 1000), "/items/ns/a", "\x01a", true},      // 1,014 bytes in 1,024 against 1,024+16+8
		{strings.Repeat("e", 1020), "/items/ns/abc", "\x03abc", false}, // 1,037 bytes would take 1,152
		{"", "", "", true},
	} {
		raw, key, vals := New().Layout([]byte(tc.enc), tc.key, tc.vals)
		if raw != tc.enc || key != tc.key || vals != tc.vals {
			t.Fatalf("layout changed the values: %q %q %q", raw, key, vals)
		}
		joined := len(tc.enc) > 0 && unsafe.StringData(key) == (*byte)(unsafe.Add(unsafe.Pointer(unsafe.StringData(raw)), len(raw)))
		if joined != tc.joined && len(tc.enc) > 0 {
			t.Fatalf("%d+%d+%d bytes: joined %v, want %v", len(tc.enc), len(tc.key), len(tc.vals), joined, tc.joined)
		}
		raw, key, vals = Off().Layout([]byte(tc.enc), tc.key, tc.vals)
		if raw != tc.enc || key != tc.key || vals != tc.vals {
			t.Fatalf("Off's layout changed the values: %q %q %q", raw, key, vals)
		}
	}
}

// TestSizeClassesAreTheRuntimes checks the size-class table against the
// running runtime, which rounds a new slice's capacity up to its class.
func TestSizeClassesAreTheRuntimes(t *testing.T) {
	for n := 1; n <= sizeClasses[len(sizeClasses)-1]; n += 7 {
		if got := cap(append([]byte(nil), make([]byte, n)...)); got != allocSize(n) {
			t.Fatalf("allocSize(%d) = %d, the runtime allocates %d", n, allocSize(n), got)
		}
	}
}

func TestHoldAndHeld(t *testing.T) {
	p := New()
	obj := newItem("ns", "a", nil)
	r := p.Hold(obj)
	if r == nil {
		t.Fatal("no reference to an object of the packer's type")
	}
	if got := p.Held(r); got != k8sruntime.Object(obj) {
		t.Fatalf("Held = %p, want %p", got, obj)
	}
	if p.Hold(&shape{}) != nil {
		t.Fatal("a reference to an object of another type")
	}
	runtime.KeepAlive(obj)
	obj = nil
	runtime.GC()
	if got := p.Held(r); got != nil {
		t.Fatalf("Held = %v after the object was collected", got)
	}
	if Off().Hold(newItem("ns", "b", nil)) != nil {
		t.Fatal("Off holds a reference")
	}
}

func TestOffChangesNothing(t *testing.T) {
	p := Off()
	a := newItem(strings.Clone("ns"), "a", map[string]string{"app": "x"})
	b := newItem(strings.Clone("ns"), "b", map[string]string{"app": "x"})
	p.Object(a)
	p.Object(b)
	if sameString(a.Namespace, b.Namespace) || mapID(a.Labels) == mapID(b.Labels) {
		t.Fatal("Off shared values")
	}
	l := map[string]string{"app": "x"}
	if mapID(p.Labels(l)) != mapID(l) || mapID(p.Labels(map[string]string{"app": "x"})) == mapID(l) {
		t.Fatal("Off shared a label set")
	}
}
