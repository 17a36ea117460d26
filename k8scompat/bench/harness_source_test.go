package bench

import (
	"context"
	"strconv"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	"github.com/listwatch/listwatch/embedtest"
)

// harnessName is the backend name of harnessSource in the capacity
// benchmark's results.
const harnessName = "harness"

// harnessSource is the least a cache could do to feed the capacity
// benchmark's watchers, so that a run over it measures the harness's own
// cost: the writer's encoding and puts, the embedded etcd, and the
// watchers' consumption of each event (the latency read from the
// annotation, the counting), plus one etcd watch, one decode per event and
// one channel send per watcher and event. No history, no filtering, no
// bookmarks, and a slow watcher blocks the others. Only GetList (which
// gives the current revision and no items) and Watch are implemented;
// the embedded Interface is nil.
type harnessSource struct {
	k8sstorage.Interface
	client *clientv3.Client

	mu       sync.Mutex
	watchers map[*harnessWatch]struct{}
}

// newHarnessSource starts a harnessSource over srv's pods, fed from the
// revision after the current one; it stops at the end of b.
func newHarnessSource(b *testing.B, srv *embedtest.Server) k8sstorage.Interface {
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := srv.Client.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	s := &harnessSource{client: srv.Client, watchers: map[*harnessWatch]struct{}{}}
	events := srv.Client.Watch(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	done := make(chan struct{})
	go func() { defer close(done); s.run(b, events) }()
	b.Cleanup(func() { cancel(); <-done })
	return s
}

// run decodes each put once and hands the same event to every watcher.
func (s *harnessSource) run(b *testing.B, events clientv3.WatchChan) {
	var to []*harnessWatch
	for resp := range events {
		for _, ev := range resp.Events {
			pod := &example.Pod{}
			if err := runtimeapi.DecodeInto(codec, ev.Kv.Value, pod); err != nil {
				b.Error(err)
				return
			}
			out := watch.Event{Type: watch.Modified, Object: pod}
			s.mu.Lock()
			to = to[:0]
			for w := range s.watchers {
				to = append(to, w)
			}
			s.mu.Unlock()
			for _, w := range to {
				select {
				case w.ch <- out:
				case <-w.stopped:
				}
			}
		}
	}
}

// GetList sets listObj's resource version to etcd's current revision and
// lists nothing.
func (s *harnessSource) GetList(ctx context.Context, _ string, _ k8sstorage.ListOptions, listObj runtimeapi.Object) error {
	resp, err := s.client.Get(ctx, "/pods/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	list, err := meta.ListAccessor(listObj)
	if err != nil {
		return err
	}
	list.SetResourceVersion(strconv.FormatInt(resp.Header.Revision, 10))
	return nil
}

// Watch registers a watcher of every pod from now on.
func (s *harnessSource) Watch(context.Context, string, k8sstorage.ListOptions) (watch.Interface, error) {
	w := &harnessWatch{src: s, ch: make(chan watch.Event, 100), stopped: make(chan struct{})}
	s.mu.Lock()
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	return w, nil
}

// harnessWatch is one watcher of a harnessSource.
type harnessWatch struct {
	src     *harnessSource
	ch      chan watch.Event
	stopped chan struct{}
	once    sync.Once
}

func (w *harnessWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *harnessWatch) Stop() {
	w.once.Do(func() {
		w.src.mu.Lock()
		delete(w.src.watchers, w)
		w.src.mu.Unlock()
		close(w.stopped)
	})
}
