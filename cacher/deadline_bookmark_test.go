package cacher_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// A watch that allows bookmarks and has a deadline gets a bookmark before
// the deadline, with an RV to resume from, even when nothing it watches
// changes; one that does not allow them gets none. The cacher's schedule
// runs on a fake clock that never moves, so the periodic bookmarks (each
// watcher at its own step of the interval) cannot land in the watch's
// 2.5 s; deadline bookmarks follow the wall clock.
func TestDeadlineBookmark(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.Clock = clocktesting.NewFakeClock(time.Now())
	})
	rv := create(t, c, "ns", "a", nil)
	for i, allow := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(testCtx(t), 2500*time.Millisecond)
		w, err := c.Watch(ctx, key("ns", "a"), storage.ListOptions{ResourceVersion: storage.RVAt(rv),
			Predicate: storage.SelectionPredicate{AllowWatchBookmarks: allow}})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		create(t, c, "other", names(2)[i], nil) // a change the watch does not see
		var got []watch.Event
		for ev := range w.ResultChan() {
			got = append(got, ev)
		}
		cancel()
		switch {
		case allow && (len(got) != 1 || got[0].Type != watch.Bookmark || rvOf(t, got[0].Object) < rv):
			t.Errorf("bookmarks allowed: events %v, want one BOOKMARK at RV >= %d before the deadline", got, rv)
		case !allow && len(got) != 0:
			t.Errorf("bookmarks not allowed: events %v, want none", got)
		}
	}
}
