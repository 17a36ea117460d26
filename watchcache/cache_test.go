package watchcache

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

func watchType(s string) watch.EventType {
	switch s {
	case "add":
		return watch.Added
	case "mod":
		return watch.Modified
	case "del":
		return watch.Deleted
	}
	return watch.Bookmark
}

func TestNewRequiresKeyFunc(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without KeyFunc succeeded")
	}
	if _, err := New(Config{KeyFunc: keyOf, MinCapacity: 10, MaxCapacity: 5}); err == nil {
		t.Fatal("New with Max < Min succeeded")
	}
}

func TestApplyTypes(t *testing.T) {
	c, _ := newTestCache(t, nil)
	if err := c.Replace([]runtime.Object{testWidget("ns", "a", 5, nil)}, 10); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		typ      string
		obj      runtime.Object
		rv       uint64
		wantType watch.EventType
		wantPrev bool
		wantErr  bool
	}{
		{"modify known", "mod", testWidget("ns", "a", 11, nil), 11, watch.Modified, true, false},
		{"add known becomes modify", "add", testWidget("ns", "a", 12, nil), 12, watch.Modified, true, false},
		{"modify unknown becomes add", "mod", testWidget("ns", "b", 13, nil), 13, watch.Added, false, false},
		{"delete known", "del", testWidget("ns", "b", 14, nil), 14, watch.Deleted, true, false},
		{"delete unknown keeps prev=cur", "del", testWidget("ns", "zz", 15, nil), 15, watch.Deleted, true, false},
		{"same revision is fine", "add", testWidget("ns", "c", 15, nil), 15, watch.Added, false, false},
		{"zero revision fails", "add", testWidget("ns", "d", 0, nil), 0, "", false, true},
		{"bookmark fails", "bookmark", testWidget("ns", "d", 16, nil), 16, "", false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := c.Apply(watchType(tc.typ), tc.obj, tc.rv)
			if tc.wantErr {
				if err == nil {
					t.Fatal("want error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type != tc.wantType || (ev.Prev != nil) != tc.wantPrev || ev.RV != tc.rv {
				t.Fatalf("got type %s prev %v rv %d", ev.Type, ev.Prev != nil, ev.RV)
			}
		})
	}
}

func TestEventsSince(t *testing.T) {
	c, _ := newTestCache(t, func(c *Config) { c.MinCapacity, c.MaxCapacity = 4, 4 })
	if _, _, err := c.EventsSince(0, 0); !errors.Is(err, storage.ErrNotReady) {
		t.Fatalf("before Replace: %v", err)
	}
	if err := c.Replace(nil, 10); err != nil {
		t.Fatal(err)
	}
	// revisions 11, 12, 12 (a transaction), 13
	mustApply(t, c, "add", testWidget("ns", "a", 11, nil), 11)
	mustApply(t, c, "add", testWidget("ns", "b", 12, nil), 12)
	mustApply(t, c, "add", testWidget("ns", "c", 12, nil), 12)
	mustApply(t, c, "mod", testWidget("ns", "a", 13, nil), 13)
	cases := []struct {
		name    string
		since   uint64
		max     int
		want    []uint64
		wantOld bool
	}{
		{"all from list RV", 10, 0, []uint64{11, 12, 12, 13}, false},
		{"after 11", 11, 0, []uint64{12, 12, 13}, false},
		{"max keeps a revision whole", 10, 2, []uint64{11, 12, 12}, false},
		{"nothing newer", 13, 0, []uint64{}, false},
		{"future", 99, 0, []uint64{}, false},
		{"before list RV", 9, 0, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs, rv, err := c.EventsSince(tc.since, tc.max)
			if tc.wantOld {
				var too *TooOldError
				if !errors.As(err, &too) || !errors.Is(err, storage.ErrGone) || too.Oldest != 10 {
					t.Fatalf("want TooOldError(oldest 10), got %v", err)
				}
				return
			}
			if err != nil || rv != 12 { // revision 13 may still be incomplete
				t.Fatalf("err %v rv %d", err, rv)
			}
			if got := rvs(evs); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v want %v", got, tc.want)
			}
		})
	}
	// Evicting 11 moves the oldest servable RV to 11.
	mustApply(t, c, "add", testWidget("ns", "d", 14, nil), 14)
	if _, _, err := c.EventsSince(10, 0); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("after eviction from 10: %v", err)
	}
	if evs, _, err := c.EventsSince(11, 0); err != nil || !slices.Equal(rvs(evs), []uint64{12, 12, 13, 14}) {
		t.Fatalf("from 11: %v %v", rvs(evs), err)
	}
}

func TestRingGrowsAndShrinksWithWindow(t *testing.T) {
	c, clk := newTestCache(t, func(c *Config) { c.MinCapacity, c.MaxCapacity, c.Window = 4, 16, time.Minute })
	if err := c.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	rv := uint64(1)
	apply := func(n int, step time.Duration) {
		for range n {
			rv++
			clk.Step(step)
			mustApply(t, c, "add", testWidget("ns", "x", rv, nil), rv)
		}
	}
	apply(20, time.Second) // all within the window: grows to the max
	if s := c.Stats(); s.Capacity != 16 || s.Events != 16 {
		t.Fatalf("after fast events: %+v", s)
	}
	apply(1, 10*time.Minute) // the buffer is stale: shrinks
	if s := c.Stats(); s.Capacity >= 16 {
		t.Fatalf("did not shrink: %+v", s)
	}
	if s := c.Stats(); s.Oldest == 1 || s.Capacity < 4 {
		t.Fatalf("oldest not advanced or below min: %+v", s)
	}
	evs, _, err := c.EventsSince(c.Oldest(), 0)
	if err != nil || evs[len(evs)-1].RV != rv {
		t.Fatalf("history after shrink: %v %v", rvs(evs), err)
	}
}

func TestReplaceResetsHistory(t *testing.T) {
	c, _ := newTestCache(t, nil)
	_ = c.Replace(nil, 5)
	mustApply(t, c, "add", testWidget("ns", "a", 6, nil), 6)
	if err := c.Replace([]runtime.Object{testWidget("ns", "b", 20, nil)}, 30); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.EventsSince(6, 0); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("history survived Replace: %v", err)
	}
	res, err := c.List(0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true})
	if err != nil || !slices.Equal(keys(res.Items), []string{"/widgets/ns/b"}) || res.RV != 30 {
		t.Fatalf("after Replace: %v %v rv=%d", keys(res.Items), err, res.RV)
	}
	if _, err := c.List(6, Exact, ListOptions{Key: "/widgets/", Recursive: true}); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("snapshot survived Replace: %v", err)
	}
}

func TestWaitUntilFresh(t *testing.T) {
	c, _ := newTestCache(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := c.WaitUntilFresh(ctx, 1); !errors.Is(err, storage.ErrNotReady) {
		t.Fatalf("not ready: %v", err)
	}
	_ = c.Replace(nil, 5)
	if err := c.WaitUntilFresh(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.WaitUntilFresh(context.Background(), 8) }()
	c.UpdateRV(7)
	select {
	case err := <-done:
		t.Fatalf("returned at RV 7: %v", err)
	default:
	}
	c.UpdateRV(8)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	err := c.WaitUntilFresh(ctx2, 100)
	var se *storage.Error
	if !errors.Is(err, storage.ErrTooLargeResourceVersion) || !errors.As(err, &se) || se.Oldest != 8 {
		t.Fatalf("timeout: %v", err)
	}
}

func TestCompact(t *testing.T) {
	c, _ := newTestCache(t, nil)
	_ = c.Replace(nil, 10)
	for rv := uint64(11); rv <= 15; rv++ {
		mustApply(t, c, "add", testWidget("ns", "x", rv, nil), rv)
	}
	c.Compact(13)
	c.Compact(12) // lower: ignored
	if c.Compacted() != 13 {
		t.Fatalf("Compacted() = %d", c.Compacted())
	}
	if evs, _, err := c.EventsSince(11, 0); err != nil || !slices.Equal(rvs(evs), []uint64{12, 13, 14, 15}) {
		t.Fatalf("history is kept after a compaction: %v %v", rvs(evs), err)
	}
	q := ListOptions{Key: "/widgets/", Recursive: true}
	if _, err := c.List(12, Exact, q); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("exact 12: %v", err)
	}
	if _, err := c.List(13, Exact, q); err != nil {
		t.Fatalf("exact 13: %v", err)
	}
}

// A revision's events arrive one by one: RV() stays below it until a newer
// revision or a progress notification proves it complete, and a replayed
// event (a watch resumed inside a revision) is ignored.
func TestPartialRevision(t *testing.T) {
	c, _ := newTestCache(t, nil)
	_ = c.Replace(nil, 10)
	mustApply(t, c, "add", testWidget("ns", "a", 11, nil), 11)
	if rv, _ := c.RV(); rv != 10 {
		t.Fatalf("RV after the first event of 11: %d", rv)
	}
	if ev, err := c.Apply(watch.Added, testWidget("ns", "a", 11, nil), 11); ev != nil || err != nil {
		t.Fatalf("replayed event: %v %v", ev, err)
	}
	mustApply(t, c, "add", testWidget("ns", "b", 11, nil), 11)
	mustApply(t, c, "del", testWidget("ns", "b", 12, nil), 12)
	if ev, err := c.Apply(watch.Deleted, testWidget("ns", "b", 12, nil), 12); ev != nil || err != nil {
		t.Fatalf("replayed deletion: %v %v", ev, err)
	}
	if rv, _ := c.RV(); rv != 11 {
		t.Fatalf("RV after an event of 12: %d", rv)
	}
	c.UpdateRV(12)
	if rv, _ := c.RV(); rv != 12 {
		t.Fatalf("RV after progress: %d", rv)
	}
	if ev, err := c.Apply(watch.Added, testWidget("ns", "c", 12, nil), 12); ev != nil || err != nil {
		t.Fatalf("event at a revision known complete: %v %v, want ignored", ev, err)
	}
	mustApply(t, c, "add", testWidget("ns", "d", 13, nil), 13)
	res, err := c.List(0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true})
	if err != nil || res.RV != 12 || !slices.Equal(keys(res.Items), []string{"/widgets/ns/a"}) {
		t.Fatalf("list while 13 is incomplete: %v at %d, %v", keys(res.Items), res.RV, err)
	}
	evs, _, _ := c.EventsSince(10, 0)
	if !slices.Equal(rvs(evs), []uint64{11, 11, 12, 13}) {
		t.Fatalf("history: %v", rvs(evs))
	}
}
