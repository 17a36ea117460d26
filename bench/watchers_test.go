package bench

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// watchPlan is a fan-out run: W watchers from the current RV, then E
// updates by one writer over objects [0, Objects) round-robin.
type watchPlan struct {
	W, E, Objects int
	// Pred is watcher i's predicate.
	Pred func(i int) storage.SelectionPredicate
	// Key is the key watcher i watches and whether recursively; nil means
	// the whole resource.
	Key func(i int) (key string, recursive bool)
	// Want is how many events watcher i must receive.
	Want func(i int) int
	// Slow reports whether watcher i sleeps SlowDelay per event.
	Slow      func(i int) bool
	SlowDelay time.Duration
	// Timeout bounds the wait for every watcher; 0 means 5 minutes.
	Timeout time.Duration
}

// watchGroup is what one class of watchers (fast or slow) saw.
type watchGroup struct {
	latencies []time.Duration // write→delivery of every event
	ended     int             // watchers whose stream ended before they had everything
	done      time.Duration   // time from the first write until the last of them finished
}

// watchResult is the outcome of a watchPlan.
type watchResult struct {
	fast, slow watchGroup
	elapsed    time.Duration // until every watcher finished
	delivered  int           // events delivered in all
	watches    int64         // etcd watch streams used
}

type watcherState struct {
	w      watch.Interface
	want   int
	slow   bool
	got    int
	lat    []time.Duration
	ended  bool
	why    string // how the stream ended early
	doneAt time.Duration
}

// runWatchPlan runs p once against src.
func runWatchPlan(b *testing.B, f *fixture, src source, p watchPlan) watchResult {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rv := f.currentRV(b)
	before := src.backend.Counts()
	states := make([]*watcherState, p.W)
	for i := range p.W {
		key, recursive := resourcePrefix, true
		if p.Key != nil {
			key, recursive = p.Key(i)
		}
		w, err := src.s.Watch(ctx, key, storage.ListOptions{
			ResourceVersion: rv, Recursive: recursive, Predicate: p.Pred(i)})
		if err != nil {
			b.Fatalf("watch %d: %v", i, err)
		}
		states[i] = &watcherState{w: w, want: p.Want(i), slow: p.Slow != nil && p.Slow(i)}
	}
	defer func() {
		for _, s := range states {
			s.w.Stop()
		}
	}()
	begin := make(chan struct{})
	var start time.Time
	var wg sync.WaitGroup
	for _, s := range states {
		s.lat = make([]time.Duration, 0, s.want)
		wg.Go(func() { consume(s, begin, &start, p.SlowDelay) })
	}
	start = time.Now()
	close(begin)
	for j := range p.E {
		if _, err := f.loader.Update(ctx, j%p.Objects, j+1); err != nil {
			b.Fatalf("update %d: %v", j, err)
		}
	}
	if !waitGroupTimeout(&wg, p.Timeout) {
		b.Fatalf("watchers did not receive all %d events within the timeout", p.E)
	}
	res := watchResult{elapsed: time.Since(start)}
	res.watches = src.backend.Counts().Sub(before).Watches + src.streams
	for _, s := range states {
		g := &res.fast
		if s.slow {
			g = &res.slow
		}
		g.latencies = append(g.latencies, s.lat...)
		g.done = max(g.done, s.doneAt)
		res.delivered += s.got
		if s.ended {
			if g.ended == 0 {
				b.Logf("a watcher ended early: %s", s.why)
			}
			g.ended++
		}
	}
	return res
}

// consume reads s's events until it has all it wants or the stream ends.
func consume(s *watcherState, begin <-chan struct{}, start *time.Time, delay time.Duration) {
	<-begin
	for ev := range s.w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified, watch.Deleted:
			if ts, ok := Stamped(ev.Object); ok {
				s.lat = append(s.lat, time.Since(ts))
			}
			s.got++
			if s.slow && delay > 0 {
				time.Sleep(delay) // the scenario: a consumer that takes 5 ms per event
			}
			if s.got >= s.want {
				s.doneAt = time.Since(*start)
				return
			}
		case watch.Error:
			s.ended, s.doneAt = true, time.Since(*start)
			s.why = fmt.Sprintf("error event after %d of %d events: %v", s.got, s.want, ev.Object)
			return
		}
	}
	s.ended, s.doneAt = true, time.Since(*start)
	s.why = fmt.Sprintf("result channel closed after %d of %d events", s.got, s.want)
}

func waitGroupTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	if d == 0 {
		d = 5 * time.Minute
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
