package etcd3

import (
	"context"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func progressResp(rev int64, created bool) clientv3.WatchResponse {
	return clientv3.WatchResponse{Header: &pb.ResponseHeader{Revision: rev}, Created: created}
}

// bookmarksOut feeds responses to w.handle and returns the RVs of the
// bookmarks it produced.
func bookmarksOut(t *testing.T, w *watcher, resps ...clientv3.WatchResponse) []int64 {
	t.Helper()
	var out []int64
	for _, r := range resps {
		if !w.handle(r) {
			t.Fatal("handle ended the watch")
		}
		for len(w.result) > 0 {
			ev := <-w.result
			if ev.Type != watch.Bookmark {
				t.Fatalf("unexpected %s event", ev.Type)
			}
			out = append(out, int64(rvOf(t, ev.Object)))
		}
	}
	return out
}

// TestProgressFromBeforeRegistrationIsIgnored feeds the watch loop what etcd
// can produce for a watch that replays history: its creation response, then
// progress answers computed before it was registered. None may become a
// bookmark while events of the replay are still to come.
func TestProgressFromBeforeRegistrationIsIgnored(t *testing.T) {
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	a := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	upd := updateTo(t, s, "/widgets/ns/a", func(w *widget.Widget) { w.Spec.Replicas = 1 })
	other := newTestStore(t, func(c *Config) { c.ResourcePrefix = "/others" })
	o := mustCreate(t, other, "/others/x", testWidget("x", nil))
	start, updRV, created := int64(rvOf(t, a)), int64(rvOf(t, upd)), int64(rvOf(t, o))

	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	newW := func() *watcher {
		ek, _ := s.prepareRecursiveKey("/widgets")
		return &watcher{s: s, key: "/widgets", etcdKey: ek, recursive: true, pred: pred, progress: true,
			startRev: start, lastRV: start, historyEnd: -1, ctx: ctx, cancel: cancel,
			result: make(chan watch.Event, 10), done: make(chan struct{})}
	}
	w := newW()
	// Before the replay delivered the update: nothing at or below createdRev.
	if got := bookmarksOut(t, w, progressResp(created, true), progressResp(created-1, false), progressResp(created, false)); len(got) != 0 {
		t.Fatalf("bookmarks %v while the event at %d is still to come", got, updRV)
	}
	// Once the replay delivered it, the same notification is true.
	w.lastRV = updRV
	if got := bookmarksOut(t, w, progressResp(created, false), progressResp(created+1, false)); len(got) != 2 || got[0] != created {
		t.Fatalf("bookmarks %v, want [%d %d]", got, created, created+1)
	}

	// With nothing to replay in the watched range, a notification at the
	// registration revision is true at once.
	w = newW()
	w.startRev, w.lastRV = updRV, updRV
	if got := bookmarksOut(t, w, progressResp(created, true), progressResp(created, false)); len(got) != 1 {
		t.Fatalf("bookmarks %v, want one at %d", got, created)
	}
	// A watch starting at its registration revision trusts notifications
	// that do not go back in time.
	w = newW()
	w.startRev, w.lastRV = created, created
	if got := bookmarksOut(t, w, progressResp(created, true), progressResp(created-1, false), progressResp(created, false)); len(got) != 1 {
		t.Fatalf("bookmarks %v, want one at %d", got, created)
	}
}
