package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/cacher"
)

// TestIdleHTTPWatchBookmarkCadence: an idle HTTP watch that allows
// bookmarks gets the cacher's periodic bookmarks (one a minute by
// default), not one per etcd progress notification (the cacher asks for
// those every ProgressInterval, here 50 ms).
func TestIdleHTTPWatchBookmarkCadence(t *testing.T) {
	f, _ := newCacherFixtureWith(t, cacher.Config{ProgressInterval: 50 * time.Millisecond})
	start := f.create("busy", "w0", nil, "")
	w := f.watch(apiBase + "/namespaces/quiet/widgets?watch=true&allowWatchBookmarks=true&resourceVersion=" + start.GetResourceVersion())
	f.create("busy", "w1", nil, "") // the cache moves on; the watch sees nothing of it
	quiet := time.After(time.Second)
	bookmarks := 0
	for {
		select {
		case e := <-w.events:
			require.Equal(t, "BOOKMARK", e.Type, string(e.Object))
			bookmarks++
		case <-quiet:
			// At most one: its periodic step may fall in this second.
			require.LessOrEqual(t, bookmarks, 1, "bookmarks in 1 s of an idle watch")
			return
		}
	}
}
