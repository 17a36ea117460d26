package robustness

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// The suite must be able to fail. Each test here plants one bug, as a
// wrapper around storage.Interface on replica 0 (no hook in the cacher),
// runs short traffic without faults, and requires the check that guards
// against that bug to report it; it logs how far into the run the first
// request that showed it was made.

// plantConfig is the planted runs' shape: short, two replicas, no faults.
func plantConfig(seed uint64) runConfig {
	return runConfig{Seed: seed, Duration: 4 * time.Second, Replicas: 2, Clients: 4, Watchers: 3, Keys: 6}
}

// requireCaught fails unless check c found violations; it logs when the
// first was made and what it was.
func requireCaught(t *testing.T, res *result, c checkName, started time.Time) {
	t.Helper()
	vs := res.of(c)
	if len(vs) == 0 {
		t.Fatalf("the planted bug was not caught by %s; the run found:\n%s", c, res.table())
	}
	t.Logf("caught by %s: %d violations, the first in a request made %v into the run (run and checks took %v): %s\n\t%s",
		c, len(vs), vs[0].At.Round(time.Millisecond), time.Since(started).Round(time.Millisecond), vs[0].What, vs[0].Op)
}

// TestPlantedStaleConsistentList: replica 0's cache lags etcd by 300 ms
// (its storage watch delivers late) and it serves consistent lists from
// the cache without waiting to be fresh (as RV "0" lists). The
// linearizability check must catch a list that misses a write
// acknowledged before it began.
func TestPlantedStaleConsistentList(t *testing.T) {
	cfg := plantConfig(11)
	cfg.WrapStore = func(s storage.Interface) storage.Interface {
		return &laggingStore{Interface: s, delay: 300 * time.Millisecond}
	}
	cfg.Plant = func(s storage.Interface) storage.Interface { return staleConsistentLists{s} }
	started := time.Now()
	r, res := execute(t, cfg)
	requireCaught(t, res, checkLinearizable, started)

	// What a failing run leaves for its reader: the history, the replicas'
	// logs, and porcupine's visualisation of the first key that is not
	// linearizable.
	if len(res.badKeys) == 0 {
		t.Fatal("porcupine found every key linearizable")
	}
	dir, err := r.writeArtifacts(res, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"history.json", "replicas.log", "linearizability-" + filepath.Base(res.badKeys[0]) + ".html"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (want a non-empty file)", name, err)
		}
	}
}

// TestPlantedGapOnResume: replica 0 answers a watch from an RV with the
// events after a gap: it drops the changes of the first revisions after
// the RV, as a replica that does not hold that RV and starts from its
// oldest would. The watch check must catch it.
func TestPlantedGapOnResume(t *testing.T) {
	cfg := plantConfig(12)
	cfg.Plant = func(s storage.Interface) storage.Interface { return gapOnResume{Interface: s, gap: 3} }
	started := time.Now()
	_, res := execute(t, cfg)
	requireCaught(t, res, checkWatch, started)
}

// TestPlantedEarlyAck: replica 0 acknowledges every third update before
// etcd committed it, with a made-up result (the cached object updated,
// its RV one past the cached one), and writes it a moment later. The
// lost-write check must catch an acknowledged RV etcd never gave it.
func TestPlantedEarlyAck(t *testing.T) {
	cfg := plantConfig(13)
	var bg sync.WaitGroup
	cfg.Plant = func(s storage.Interface) storage.Interface { return &earlyAck{Interface: s, bg: &bg} }
	started := time.Now()
	_, res := execute(t, cfg)
	bg.Wait()
	requireCaught(t, res, checkLost, started)
}

// TestPlantedSilentWatches: replica 0's watches deliver nothing (no
// event, no bookmark, no error) and never end. A watch the client stops
// is judged only up to what it was told, so only the final watches, which
// must be told about etcd's final revision, can catch it.
func TestPlantedSilentWatches(t *testing.T) {
	cfg := plantConfig(14)
	cfg.Replicas, cfg.FinalWatchWait = 1, 2*time.Second
	cfg.Plant = func(s storage.Interface) storage.Interface { return silentWatches{s} }
	started := time.Now()
	_, res := execute(t, cfg)
	requireCaught(t, res, checkWatch, started)
	if res.stalled == 0 {
		t.Errorf("no final watch stalled: %v", res.of(checkWatch))
	}
}

// silentWatches' watches deliver nothing.
type silentWatches struct{ storage.Interface }

func (s silentWatches) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	return newRelay(w, func(watch.Event, func(watch.Event) bool) bool { return true }), nil
}

// staleConsistentLists serves consistent lists as RV "0" lists: from the
// cache as it is, without waiting for it to be fresh.
type staleConsistentLists struct{ storage.Interface }

func (s staleConsistentLists) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if opts.ResourceVersion.IsUnset() && opts.Predicate.Continue == "" {
		opts.ResourceVersion = storage.RVAny
	}
	return s.Interface.GetList(ctx, key, opts, listObj)
}

// laggingStore delivers its watches' events delay late.
type laggingStore struct {
	storage.Interface
	delay time.Duration
}

func (s *laggingStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	// Stamp each event as it comes, hand it on delay after.
	type stamped struct {
		ev watch.Event
		at time.Time
	}
	queue := make(chan stamped, 1<<16)
	go func() {
		defer close(queue)
		for ev := range w.ResultChan() {
			queue <- stamped{ev, time.Now()}
		}
	}()
	r := &relay{in: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go func() {
		defer close(r.out)
		for q := range queue {
			time.Sleep(time.Until(q.at.Add(s.delay)))
			select {
			case r.out <- q.ev:
			case <-r.stop:
				for range queue {
				}
				return
			}
		}
	}()
	return r, nil
}

// gapOnResume drops the data events of the first gap revisions after a
// watch's start RV.
type gapOnResume struct {
	storage.Interface
	gap uint64
}

func (s gapOnResume) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	from := opts.ResourceVersion.Revision()
	if from == 0 {
		return w, nil
	}
	var revs []uint64
	return newRelay(w, func(ev watch.Event, send func(watch.Event) bool) bool {
		if ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted {
			rv, _ := s.Versioner().ObjectResourceVersion(ev.Object)
			if len(revs) == 0 || revs[len(revs)-1] != rv {
				revs = append(revs, rv)
			}
			if uint64(len(revs)) <= s.gap {
				return true
			}
		}
		return send(ev)
	}), nil
}

// earlyAck acknowledges every third update at once with a made-up result
// and writes it in the background.
type earlyAck struct {
	storage.Interface
	bg *sync.WaitGroup
	mu sync.Mutex
	n  int
}

func (s *earlyAck) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, try storage.UpdateFunc, cached runtime.Object, uo storage.UpdateOptions) error {
	s.mu.Lock()
	s.n++
	early := s.n%3 == 0
	s.mu.Unlock()
	if !early {
		return s.Interface.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, try, cached, uo)
	}
	cur := dest.DeepCopyObject()
	if err := s.Get(ctx, key, storage.GetOptions{ResourceVersion: storage.RVAny}, cur); err != nil {
		return err
	}
	rv, _ := s.Versioner().ObjectResourceVersion(cur)
	out, _, err := try(cur, storage.ResponseMeta{ResourceVersion: rv})
	if err != nil {
		return err
	}
	if err := s.Versioner().UpdateObject(out, rv+1); err != nil {
		return err
	}
	out.(*widget.Widget).DeepCopyInto(dest.(*widget.Widget))
	s.bg.Go(func() {
		time.Sleep(200 * time.Millisecond)
		bctx, cancel := context.WithTimeout(context.Background(), requestDeadline)
		defer cancel()
		_ = s.Interface.GuaranteedUpdate(bctx, key, dest.DeepCopyObject(), ignoreNotFound, pre, try, nil, storage.UpdateOptions{})
	})
	return nil
}

// relay is a watch whose events pass through a function on their way:
// fn forwards them with send (false: the watch was stopped) or drops them.
type relay struct {
	in   watch.Interface
	out  chan watch.Event
	stop chan struct{}
	once sync.Once
}

func newRelay(in watch.Interface, fn func(ev watch.Event, send func(watch.Event) bool) bool) *relay {
	r := &relay{in: in, out: make(chan watch.Event), stop: make(chan struct{})}
	send := func(ev watch.Event) bool {
		select {
		case r.out <- ev:
			return true
		case <-r.stop:
			return false
		}
	}
	go func() {
		defer close(r.out)
		for ev := range in.ResultChan() {
			if !fn(ev, send) {
				in.Stop()
				for range in.ResultChan() {
				}
				return
			}
		}
	}()
	return r
}

func (r *relay) ResultChan() <-chan watch.Event { return r.out }

func (r *relay) Stop() {
	r.once.Do(func() {
		close(r.stop)
		r.in.Stop()
	})
}
