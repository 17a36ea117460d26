package cacher_test

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// Idle watchers that allow bookmarks get one about every BookmarkInterval
// (here the one-minute default, on a fake clock), each at its own step of
// the minute rather than all at once; a watcher that does not allow them
// gets none.
func TestBookmarkCadence(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Now())
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.Clock = clk
	})
	rv := rvAt(create(t, c, "ns", "a", nil))
	const n = 20
	var with []watch.Interface
	for range n {
		w, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
			Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		with = append(with, w)
	}
	without := watchAll(t, c, rv)
	defer without.Stop()
	// A watcher gets the bookmarks of its step only once it is in live
	// dispatch: wait for all of them before the clock moves.
	for deadline := time.Now().Add(10 * time.Second); cacher.LiveWatchersForTest(c) < n+1; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d watchers in live dispatch after 10 s", cacher.LiveWatchersForTest(c), n+1)
		}
		time.Sleep(time.Millisecond)
	}

	got := make([]int, n)     // bookmarks per watcher
	firstAt := map[int]bool{} // the steps at which watchers got their first
	collect := func(step int) {
		quiet := time.After(20 * time.Millisecond)
		for {
			select {
			case <-quiet:
				return
			case ev := <-without.ResultChan():
				t.Fatalf("watcher without bookmarks got %s", ev.Type)
			default:
			}
			idle := true
			for i, w := range with {
				select {
				case ev := <-w.ResultChan():
					idle = false
					if ev.Type != watch.Bookmark {
						t.Fatalf("watcher %d: %s, want only bookmarks", i, ev.Type)
					}
					if got[i]++; got[i] == 1 {
						firstAt[step] = true
					}
				default:
				}
			}
			if idle {
				time.Sleep(time.Millisecond)
			}
		}
	}
	for round := 1; round <= 2; round++ {
		for s := range 60 {
			clk.Step(time.Second)
			collect((round-1)*60 + s)
		}
		// A bookmark due at the last step may still be on its way on a
		// busy machine: wait for every watcher's (a missing one fails
		// below), then look once more for any extra.
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			if slices.Min(got) >= round {
				break
			}
			collect(-1)
		}
		collect(-1)
		for i, k := range got {
			if k != round {
				t.Fatalf("after %d idle minutes watcher %d got %d bookmarks, want %d (all: %v)", round, i, k, round, got)
			}
		}
	}
	if len(firstAt) < 5 {
		t.Errorf("%d watchers got their first bookmark at only %d distinct seconds; want them spread", n, len(firstAt))
	}
}
