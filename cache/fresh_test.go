package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
)

// laggingLW lists Widgets at RV 10 for the informer (RV "0") but answers a
// consistent list (RV unset) at RV 20: writes of other resources moved
// the revision on. Its watch sends nothing until bookmark is called.
type laggingLW struct {
	mu        sync.Mutex
	watch     *watch.FakeWatcher // the latest
	opened    chan struct{}      // closed by the first Watch
	once      sync.Once
	requested atomic.Int64
	lists     atomic.Int64 // consistent lists (RV unset)
}

func newLaggingLW() *laggingLW {
	return &laggingLW{opened: make(chan struct{})}
}

func (l *laggingLW) List(_ context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	rv := "10"
	if opts.ResourceVersion == "" {
		rv = "20"
		l.lists.Add(1)
	}
	return &widget.WidgetList{ListMeta: metav1.ListMeta{ResourceVersion: rv}}, nil
}

func (l *laggingLW) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watch = watch.NewFakeWithChanSize(8, false)
	l.once.Do(func() { close(l.opened) })
	return l.watch, nil
}

func (l *laggingLW) bookmark() {
	w := widget.NewWidget("", "")
	w.ResourceVersion = "20"
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watch.Action(watch.Bookmark, w)
}

// laggingProgressLW is a laggingLW that can be asked for progress: the
// first request sends the bookmark.
type laggingProgressLW struct{ *laggingLW }

func (l laggingProgressLW) RequestWatchProgress(context.Context) error {
	if l.requested.Add(1) == 1 {
		l.bookmark()
	}
	return nil
}

func startLagging(t *testing.T, lw reflector.ListerWatcher) *cache.Cache {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(t, err)
	_, err = c.InformerFor(&widget.Widget{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	t.Cleanup(func() { cancel(); c.Shutdown() })
	return c
}

// TestWaitFreshWaitsForTheCurrentRevision: an informer synced at RV 10 is
// not fresh while the resource's current RV is 20; WaitFresh gives up when
// ctx ends with an error naming it, what it has and what it needs, and
// returns once a bookmark at 20 has been applied.
func TestWaitFreshWaitsForTheCurrentRevision(t *testing.T) {
	lw := newLaggingLW()
	c := startLagging(t, lw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, c.WaitForCacheSync(ctx))
	<-lw.opened

	short, stop := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.WaitFresh(short)
	stop()
	require.ErrorIs(t, err, cache.ErrNotFresh)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var nf *cache.NotFreshError
	require.True(t, errors.As(err, &nf))
	require.Equal(t, []cache.Lag{{Resource: "widgets.v1.demo.listwatch.dev", Have: "10", Want: "20"}}, nf.Lagging)
	require.Contains(t, err.Error(), "widgets.v1.demo.listwatch.dev: at resourceVersion 10, want 20")

	lw.bookmark()
	require.NoError(t, c.WaitFresh(ctx))
}

// TestWaitFreshRequestsProgress: with a ListerWatcher that can ask its
// storage for progress, WaitFresh does, and the bookmark that follows
// makes the informer fresh without any write.
func TestWaitFreshRequestsProgress(t *testing.T) {
	lw := laggingProgressLW{newLaggingLW()}
	c := startLagging(t, lw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	<-lw.opened
	require.NoError(t, c.WaitFresh(ctx))
	require.Positive(t, lw.requested.Load())
}

// TestWaitFreshRelistsAnInformerLeftBehind: no bookmark comes and the
// storage cannot be asked for one (as over HTTP); after a while WaitFresh
// makes the informer relist with a consistent read, which brings it to the
// current revision.
func TestWaitFreshRelistsAnInformerLeftBehind(t *testing.T) {
	lw := newLaggingLW()
	c := startLagging(t, lw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	<-lw.opened
	require.NoError(t, c.WaitFresh(ctx))
	// One consistent list reads the current RV, one relists.
	require.Equal(t, int64(2), lw.lists.Load())
}

// TestWaitFreshUnreadableRevision: a resource whose current revision
// cannot be read is reported with the read's error when ctx ends.
func TestWaitFreshUnreadableRevision(t *testing.T) {
	down := errors.New("server unreachable")
	lw := reflector.ListWatchFuncs{
		ListFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) { return nil, down },
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, down
		},
	}
	c := startLagging(t, lw)
	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	err := c.WaitFresh(ctx)
	var nf *cache.NotFreshError
	require.True(t, errors.As(err, &nf), "%v", err)
	require.Len(t, nf.Lagging, 1)
	require.ErrorIs(t, nf.Lagging[0].Err, down)
	require.Empty(t, nf.Lagging[0].Have)
	require.Contains(t, err.Error(), "current resourceVersion unknown: server unreachable")
}
