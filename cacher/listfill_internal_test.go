package cacher

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/watchcache"
)

// fillElements returns n cache elements holding newObj(0..n-1).
func fillElements(n int, newObj func(i int) apiruntime.Object) []*watchcache.Element {
	els := make([]*watchcache.Element, n)
	for i := range els {
		els[i] = watchcache.NewElement(fmt.Sprintf("/widgets/ns/w-%06d", i), newObj(i), uint64(i+1), nil, watchcache.Fields{})
	}
	return els
}

func widgetAt(i int) apiruntime.Object { return widget.NewWidget("ns", fmt.Sprintf("w-%06d", i)) }

// A list large enough to be copied in parts holds every object, in order,
// as a copy the caller may modify without touching the cache.
func TestSetItemsCopiesLargeListInOrder(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2 to copy in parts")
	}
	n := 3*fillChunk + 7
	els := fillElements(n, widgetAt)
	list := &widget.WidgetList{}
	if err := setItems(list, els); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("got %d items, want %d", len(list.Items), n)
	}
	for i := range list.Items {
		if want := fmt.Sprintf("w-%06d", i); list.Items[i].Name != want {
			t.Fatalf("item %d is %q, want %q", i, list.Items[i].Name, want)
		}
	}
	list.Items[0].Name = "changed"
	obj, _ := els[0].Object()
	if obj.(*widget.Widget).Name != "w-000000" {
		t.Fatal("modifying a listed item modified the cached object")
	}
}

// Filling a typed list allocates its items and nothing per item (no
// intermediate slice of objects).
//
// runtime.MemStats counts the whole process's allocations, and the
// package's embedded etcd allocates in the background whenever the
// scheduler runs it, which on a loaded machine is often in the middle of
// the fill. The fill allocates the same every time (2000 items are copied
// by the caller alone) and others' allocations only add to it, so the
// fill's own is the least of several measurements.
func TestSetItemsAllocatesOnlyTheItems(t *testing.T) {
	const n, tries = 2000, 20
	els := fillElements(n, widgetAt)
	items := uint64(n) * uint64(unsafe.Sizeof(widget.Widget{}))
	// The items' allocation is rounded up to whole 8 KiB pages; everything
	// else (a few reflect headers) fits in 1 KiB. A slice of n interfaces
	// (32 KB) would not.
	limit := items + 8192 + 1024
	least := uint64(math.MaxUint64)
	for range tries {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		list := &widget.WidgetList{}
		err := setItems(list, els)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != n {
			t.Fatalf("got %d items, want %d", len(list.Items), n)
		}
		if least = min(least, after.TotalAlloc-before.TotalAlloc); least <= limit {
			return
		}
	}
	t.Fatalf("filling %d items allocated at least %d bytes (the least of %d fills), want at most %d (the items, rounded, and 1 KiB)",
		n, least, tries, limit)
}

// Unstructured lists take the same path; item types that are not the
// cached objects' (a metav1.List of RawExtensions) are filled by
// meta.SetList.
func TestSetItemsOtherListTypes(t *testing.T) {
	uels := fillElements(3, func(i int) apiruntime.Object {
		return widget.NewUnstructuredWidget("ns", fmt.Sprintf("w-%d", i), nil)
	})
	ulist := &unstructured.UnstructuredList{}
	if err := setItems(ulist, uels); err != nil {
		t.Fatal(err)
	}
	if len(ulist.Items) != 3 || ulist.Items[2].GetName() != "w-2" {
		t.Fatalf("unstructured items: %+v", ulist.Items)
	}

	els := fillElements(3, widgetAt)
	raw := &metav1.List{}
	if err := setItems(raw, els); err != nil {
		t.Fatal(err)
	}
	if len(raw.Items) != 3 || raw.Items[1].Object.(*widget.Widget).Name != "w-000001" {
		t.Fatalf("raw items: %+v", raw.Items)
	}
}

// BenchmarkSetItems fills a WidgetList of n cached widgets of about 1 KiB:
// Path=typed is setItems, Path=generic the meta.SetList path it replaced
// for typed lists (run with -cpu 1,2 to see the parallel copy).
func BenchmarkSetItems(b *testing.B) {
	pad := strings.Repeat("x", 760)
	for _, n := range []int{10000, 50000} {
		els := fillElements(n, func(i int) apiruntime.Object {
			w := widget.NewWidget("ns", fmt.Sprintf("w-%06d", i)).WithLabels(map[string]string{"app": "a"})
			w.Spec.Data = pad
			return w
		})
		for _, path := range []struct {
			name string
			fill func(apiruntime.Object, []*watchcache.Element) error
		}{{"typed", setItems}, {"generic", setItemsGeneric}} {
			b.Run(fmt.Sprintf("Items=%d/Path=%s", n, path.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := path.fill(&widget.WidgetList{}, els); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A large list is complete when the fill returns even if no helper
// goroutine has run yet: the caller copies what the helpers did not take,
// and a helper that runs afterwards finds nothing left.
func TestCopySharedNeedsNoHelperToRun(t *testing.T) {
	n := 5*fillGrain + 3
	els := fillElements(n, widgetAt)
	out := reflect.MakeSlice(reflect.TypeFor[[]widget.Widget](), n, n)
	var late []func()
	done := make(chan error, 1)
	go func() { done <- copyShared(out, els, 2, func(f func()) { late = append(late, f) }) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the fill waited for helpers that never started")
	}
	for i := range n {
		if got, want := out.Index(i).Interface().(widget.Widget).Name, fmt.Sprintf("w-%06d", i); got != want {
			t.Fatalf("item %d is %q, want %q", i, got, want)
		}
	}
	if len(late) != 2 {
		t.Fatalf("%d helpers started, want 2", len(late))
	}
	for _, f := range late {
		f() // finds nothing left: must not write or block
	}
}

// An item of another type fails the shared copy with errItemType, so that
// setItems falls back to meta.SetList.
func TestCopySharedReportsItemType(t *testing.T) {
	n := 4*fillGrain + 1
	els := fillElements(n, widgetAt)
	els[3*fillGrain] = watchcache.NewElement("/widgets/ns/other", &unstructured.Unstructured{}, 1, nil, watchcache.Fields{})
	out := reflect.MakeSlice(reflect.TypeFor[[]widget.Widget](), n, n)
	err := copyShared(out, els, 1, func(f func()) { go f() })
	if !errors.Is(err, errItemType) {
		t.Fatalf("got %v, want errItemType", err)
	}
}
