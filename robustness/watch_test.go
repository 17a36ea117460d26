package robustness

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// watchRec is one recorded watch: where and how it started, and what it
// received until it ended or the watcher stopped it.
type watchRec struct {
	ID      int
	Watcher int
	Replica int
	Call    time.Duration
	Rec     storagetest.WatchRecord
	// ResumeOf is the watch this one resumed (-1: none), from an RV it saw.
	ResumeOf int
	// StartErr is the error Watch returned, if any.
	StartErr *op
	// Abandoned: the run ended before Watch answered.
	Abandoned bool
	// Final: the watch resumed after the run, to be told about etcd's
	// final revision; Stalled says how it failed to.
	Final   bool
	Stalled string
}

// watcher is one watching client: it watches from an RV with a selector
// for a while, then stops and resumes from an RV it saw, on a replica
// picked again, until the run ends.
type watcher struct {
	id  int
	rng *rand.Rand
	run *run
}

func (w *watcher) loop(ctx context.Context) {
	var prev *watchRec
	for ctx.Err() == nil {
		rep, s := w.run.pickReplica(w.rng, w.id)
		if s == nil {
			sleepCtx(ctx, 20*time.Millisecond)
			continue
		}
		rec := &watchRec{ID: int(w.run.rec.ids.Add(1)), Watcher: w.id, Replica: rep, ResumeOf: -1}
		switch {
		case prev != nil && !endedWithError(prev.Rec):
			// Resume: from the last RV seen mostly, from an earlier one sometimes.
			rec.ResumeOf = prev.ID
			rec.Rec.Label, rec.Rec.Bookmarks = prev.Rec.Label, prev.Rec.Bookmarks
			rec.Rec.Start = pickSeen(w.rng, prev.Rec)
		default:
			rec.Rec.Label = listSelectors[w.rng.IntN(len(listSelectors))]
			rec.Rec.Bookmarks = w.rng.IntN(2) == 0
			rec.Rec.Start = max(w.run.startRev, back(w.run.rec.maxRV.Load(), w.rng.IntN(10)))
		}
		w.watchOnce(ctx, s, w.run.replicas[rep], rec)
		if rec.Abandoned {
			return
		}
		w.run.addWatch(rec)
		prev = rec
		if rec.StartErr != nil {
			prev = nil
			sleepCtx(ctx, 50*time.Millisecond)
		}
	}
}

// watchOnce runs one watch for a random while.
func (w *watcher) watchOnce(ctx context.Context, s storage.Interface, rep *replica, rec *watchRec) {
	sel, err := labels.Parse(rec.Rec.Label)
	if err != nil {
		panic(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rec.Call = w.run.rec.since()
	start := &op{ID: rec.ID, Client: 1000 + w.id, Replica: rec.Replica, Kind: opWatch, Mode: rvNotOlderThan,
		ReqRV: rec.Rec.Start, Label: rec.Rec.Label, Call: rec.Call}
	wi, err := s.Watch(wctx, widget.KeyRoot, storage.ListOptions{
		ResourceVersion: storage.RVAt(rec.Rec.Start), Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: widget.GetAttrs, AllowWatchBookmarks: rec.Rec.Bookmarks}})
	start.Return = w.run.rec.since()
	if err != nil {
		if ctx.Err() != nil {
			rec.Abandoned = true // the run ended under the request: not an answer
			return
		}
		start.setErr(err)
		rec.StartErr = start
		w.run.watchStarted(start)
		return
	}
	w.run.watchStarted(start)
	timer := time.NewTimer(time.Duration(300+w.rng.IntN(2000)) * time.Millisecond)
	defer timer.Stop()
	ch := wi.ResultChan()
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				// A replica that dies ends its watches as a server process
				// does, by closing them: that is no silent end.
				rec.Rec.Closed = ctx.Err() == nil && rep.get() == s
				rec.Rec.CompactedAt = w.run.compactRev.Load()
				rec.Rec.Partial = true
				return
			}
			rec.Rec.Events = append(rec.Rec.Events, ev)
			if ev.Type == watch.Error {
				rec.Rec.CompactedAt = w.run.compactRev.Load()
				rec.Rec.Partial = true
				wi.Stop()
				for range ch {
				}
				return
			}
		case <-timer.C:
			stopWatch(wi, rec)
			return
		case <-ctx.Done():
			stopWatch(wi, rec)
			return
		}
	}
}

// stopWatch stops wi, keeping what was already queued, and waits until
// its channel is closed.
func stopWatch(wi watch.Interface, rec *watchRec) {
	wi.Stop()
	for ev := range wi.ResultChan() {
		rec.Rec.Events = append(rec.Rec.Events, ev)
	}
	rec.Rec.Partial = true
}

func endedWithError(r storagetest.WatchRecord) bool {
	n := len(r.Events)
	return n > 0 && r.Events[n-1].Type == watch.Error
}

// errorStatus returns the status of a watch's error event, if it ended with one.
func errorStatus(r storagetest.WatchRecord) (*metav1.Status, bool) {
	if !endedWithError(r) {
		return nil, false
	}
	st, ok := r.Events[len(r.Events)-1].Object.(*metav1.Status)
	return st, ok
}

// pickSeen picks the RV a resume starts from: the last RV the watch was
// told about (event or bookmark), or now and then an earlier one.
func pickSeen(rng *rand.Rand, r storagetest.WatchRecord) uint64 {
	seen := []uint64{r.Start}
	for _, ev := range r.Events {
		if ev.Type == watch.Error {
			break
		}
		if rv, err := (storage.APIObjectVersioner{}).ObjectResourceVersion(ev.Object); err == nil && rv > 0 {
			seen = append(seen, rv)
		}
	}
	if rng.IntN(4) == 0 {
		return seen[rng.IntN(len(seen))]
	}
	last := seen[0]
	for _, rv := range seen {
		last = max(last, rv)
	}
	return last
}

// startWatchers runs n watchers until ctx is done.
func (r *run) startWatchers(ctx context.Context, wg *sync.WaitGroup, n int) {
	for i := range n {
		w := &watcher{id: i, rng: rand.New(rand.NewPCG(r.cfg.Seed, uint64(200+i))), run: r}
		wg.Go(func() { w.loop(ctx) })
	}
}

// describeEvent is an event in one line: type, key, RV, seq.
func describeEvent(ev watch.Event) string {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("%s %d %s", ev.Type, st.Code, st.Message)
	}
	rv, _ := (storage.APIObjectVersioner{}).ObjectResourceVersion(ev.Object)
	if w, ok := ev.Object.(*widget.Widget); ok && ev.Type != watch.Bookmark {
		return fmt.Sprintf("%s %s/%s@%d#%s", ev.Type, w.Namespace, w.Name, rv, w.Annotations[storagetest.SeqAnnotation])
	}
	return fmt.Sprintf("%s@%d", ev.Type, rv)
}

// finalWatchWait bounds, unless the run sets its own, how long a final
// watch may take to be told about etcd's final revision.
const finalWatchWait = 20 * time.Second

// finalWatches: once the traffic and the faults are over, every watcher
// resumes once more from the last RV it saw, with bookmarks, and must be
// told about etcd's final revision (an event or a bookmark at or past it)
// within finalWatchWait, with every change up to it. The watches stopped
// during the run are judged only up to what they were told; a watch that
// stalls is caught here.
func (r *run) finalWatches(ctx context.Context, final uint64) {
	last := map[int]*watchRec{}
	r.mu.Lock()
	for _, w := range r.watches { // each watcher's watches are added in order
		last[w.Watcher] = w
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for id, prev := range last {
		if endedWithError(prev.Rec) || prev.StartErr != nil {
			continue // it would start over from a fresh RV
		}
		wg.Go(func() { r.addWatch(r.finalWatch(ctx, id, prev, final)) })
	}
	wg.Wait()
}

func (r *run) finalWatch(ctx context.Context, watcher int, prev *watchRec, final uint64) *watchRec {
	rep := r.replicas[watcher%len(r.replicas)]
	rec := &watchRec{ID: int(r.rec.ids.Add(1)), Watcher: watcher, Replica: rep.id, ResumeOf: prev.ID, Call: r.rec.since(), Final: true}
	wait := r.cfg.FinalWatchWait
	if wait == 0 {
		wait = finalWatchWait
	}
	rec.Rec.Start, rec.Rec.Label, rec.Rec.Bookmarks = lastSeen(prev.Rec), prev.Rec.Label, true
	s := rep.get()
	if s == nil {
		rec.Stalled = "final watch: its replica is not running"
		return rec
	}
	sel, err := labels.Parse(rec.Rec.Label)
	if err != nil {
		panic(err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	wi, err := s.Watch(wctx, widget.KeyRoot, storage.ListOptions{
		ResourceVersion: storage.RVAt(rec.Rec.Start), Recursive: true, ProgressNotify: true,
		Predicate: storage.SelectionPredicate{Label: sel, GetAttrs: widget.GetAttrs, AllowWatchBookmarks: true}})
	if err != nil {
		rec.Stalled = fmt.Sprintf("final watch from RV %d did not start: %v", rec.Rec.Start, err)
		return rec
	}
	told := rec.Rec.Start
	for told < final {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				rec.Stalled = fmt.Sprintf("final watch closed at RV %d, before etcd's final revision %d", told, final)
				rec.Rec.Partial = true
				return rec
			}
			rec.Rec.Events = append(rec.Rec.Events, ev)
			if ev.Type == watch.Error {
				rec.Rec.CompactedAt = r.compactRev.Load()
				rec.Rec.Partial = true
				stopWatch(wi, rec)
				return rec
			}
			if rv, err := (storage.APIObjectVersioner{}).ObjectResourceVersion(ev.Object); err == nil {
				told = max(told, rv)
			}
		case <-wctx.Done():
			rec.Stalled = fmt.Sprintf("final watch from RV %d told about RV %d only, %v after etcd reached %d",
				rec.Rec.Start, told, wait, final)
			stopWatch(wi, rec)
			return rec
		}
	}
	stopWatch(wi, rec) // judged up to the last RV it was told about: the final revision or past it
	return rec
}

// lastSeen is the highest RV a watch was told about before any error.
func lastSeen(r storagetest.WatchRecord) uint64 {
	last := r.Start
	for _, ev := range r.Events {
		if ev.Type == watch.Error {
			break
		}
		if rv, err := (storage.APIObjectVersioner{}).ObjectResourceVersion(ev.Object); err == nil {
			last = max(last, rv)
		}
	}
	return last
}
