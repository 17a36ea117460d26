package watchcache

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/examples/widget"
)

func keyOf(obj runtime.Object) (string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return "/widgets/" + a.GetNamespace() + "/" + a.GetName(), nil
}

func testWidget(ns, name string, rv uint64, lbls map[string]string) *widget.Widget {
	w := widget.NewWidget(ns, name).WithLabels(lbls)
	w.ResourceVersion = strconv.FormatUint(rv, 10)
	return w
}

func newTestCache(t testing.TB, mod func(*Config)) (*Cache, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Unix(1000, 0))
	cfg := Config{KeyFunc: keyOf, GetAttrs: widget.GetAttrs, Clock: clk,
		IndexLabels: []string{"app"}, IndexFields: []string{"spec.nodeName"}}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, clk
}

func mustApply(t testing.TB, c *Cache, typ string, obj runtime.Object, rv uint64) *Event {
	t.Helper()
	ev, err := c.Apply(watchType(typ), obj, rv)
	if err != nil {
		t.Fatalf("apply %s at %d: %v", typ, rv, err)
	}
	return ev
}

func keys(items []*Element) []string {
	out := make([]string, len(items))
	for i, el := range items {
		out[i] = el.Key
	}
	return out
}

func rvs(evs []*Event) []uint64 {
	out := make([]uint64, len(evs))
	for i, e := range evs {
		out[i] = e.RV
	}
	return out
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%03d", i)
	}
	return out
}

// mustObject returns el's object, failing the test if it cannot be decoded.
func mustObject(t testing.TB, el *Element) runtime.Object {
	t.Helper()
	obj, err := el.Object()
	if err != nil {
		t.Fatal(err)
	}
	return obj
}
