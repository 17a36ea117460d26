package etcd3

import (
	"context"
	"testing"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// TestProgressFromBeforeRegistrationIsIgnored feeds the watch loop the
// sequence etcd can produce: the creation response, then a progress answer
// computed before the watch was registered (older than the history the
// watch still has to replay). No bookmark may come out of it; a later
// progress notification newer than the registration does become one.
func TestProgressFromBeforeRegistrationIsIgnored(t *testing.T) {
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	w := &watcher{s: s, key: "/widgets", pred: pred, progress: true, startRev: 10, lastRV: 10,
		ctx: ctx, cancel: cancel, result: make(chan watch.Event, 10), done: make(chan struct{})}
	resp := func(rev int64, created bool) clientv3.WatchResponse {
		return clientv3.WatchResponse{Header: &pb.ResponseHeader{Revision: rev}, Created: created}
	}
	for _, r := range []clientv3.WatchResponse{resp(50, true), resp(40, false), resp(50, false)} {
		if !w.handle(r) {
			t.Fatal("handle ended the watch")
		}
	}
	if n := len(w.result); n != 0 {
		t.Fatalf("%d bookmarks from progress at or before the registration revision", n)
	}
	if !w.handle(resp(51, false)) {
		t.Fatal("handle ended the watch")
	}
	ev := <-w.result
	if ev.Type != watch.Bookmark || rvOf(t, ev.Object) != 51 {
		t.Fatalf("got %s at %d, want BOOKMARK at 51", ev.Type, rvOf(t, ev.Object))
	}
	// A watch starting at or after its registration trusts every progress
	// notification that does not go back in time.
	w2 := &watcher{s: s, key: "/widgets", pred: pred, progress: true, startRev: 50, lastRV: 50,
		ctx: ctx, cancel: cancel, result: make(chan watch.Event, 10), done: make(chan struct{})}
	for _, r := range []clientv3.WatchResponse{resp(50, true), resp(49, false), resp(50, false)} {
		w2.handle(r)
	}
	if n := len(w2.result); n != 1 {
		t.Fatalf("%d bookmarks, want 1 (at 50)", n)
	}
}
