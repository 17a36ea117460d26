package bench

import (
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

func TestObjectMatchesWorkload(t *testing.T) {
	for _, i := range []int{0, 7, 12345} {
		w := Object(i)
		data, err := runtime.Encode(widget.Codec, w)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < ObjectSize-16 || len(data) > ObjectSize+16 {
			t.Errorf("object %d encodes to %d bytes, want about %d", i, len(data), ObjectSize)
		}
		l, f, err := widget.GetAttrs(w)
		if err != nil {
			t.Fatal(err)
		}
		if w.Namespace != Namespace || w.Name != Name(i) || l["app"] != "app-"+itoa(i%10) ||
			l["tier"] != "tier-"+itoa((i/10)%10) || f["spec.nodeName"] != "node-"+itoa(i%100) {
			t.Errorf("object %d = %s/%s labels %v fields %v", i, w.Namespace, w.Name, l, f)
		}
	}
	if Name(42) != "obj-00042" {
		t.Errorf("Name(42) = %q", Name(42))
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestStampRoundTrip(t *testing.T) {
	w := Object(1)
	now := time.Unix(0, 1234567890123)
	if err := Stamp(w, now); err != nil {
		t.Fatal(err)
	}
	got, ok := Stamped(w)
	if !ok || !got.Equal(now) {
		t.Errorf("Stamped = %v %v, want %v", got, ok, now)
	}
	if _, ok := Stamped(Object(2)); ok {
		t.Error("an unstamped object reports a stamp")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {1, 1}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("Percentile(%v) = %v, want %v", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 {
		t.Error("Percentile of nothing is not 0")
	}
}

func TestN(t *testing.T) {
	t.Setenv("LISTWATCH_BENCH_N", "")
	if n, err := N(); err != nil || n != DefaultN {
		t.Errorf("N() = %d, %v; want %d", n, err, DefaultN)
	}
	t.Setenv("LISTWATCH_BENCH_N", "50000")
	if n, err := N(); err != nil || n != 50000 {
		t.Errorf("N() = %d, %v; want 50000", n, err)
	}
	t.Setenv("LISTWATCH_BENCH_N", "-3")
	if _, err := N(); err == nil {
		t.Error("N() accepted a negative count")
	}
}
