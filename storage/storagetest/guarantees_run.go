package storagetest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/watch"
)

// guaranteeRun is the state of one RunWatchGuarantees call.
type guaranteeRun struct {
	t    *testing.T
	env  GuaranteeEnv
	opts GuaranteeOptions

	hist       *history
	recordCtx  context.Context // the ground-truth watch's context, for progress requests
	log        *rvLog
	startRev   uint64
	compactRev atomic.Uint64 // set just before the compaction is issued
	seq        atomic.Int64
	// watchCtx is the context of every watch: it outlives the writers.
	watchCtx context.Context

	mu       sync.Mutex
	watchers []*watchRun
}

func newGuaranteeRun(t *testing.T, env GuaranteeEnv, opts GuaranteeOptions) *guaranteeRun {
	return &guaranteeRun{t: t, env: env, opts: opts}
}

func (r *guaranteeRun) run() {
	t := r.t
	ctx, cancel := context.WithTimeout(context.Background(), 2*r.opts.Timeout+time.Minute)
	defer cancel()
	prefix := r.env.etcdResourcePrefix()
	resp, err := r.env.Client.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("reading the resource prefix %q: %v", prefix, err)
	}
	if resp.Count != 0 {
		t.Fatalf("resource prefix %q holds %d keys; RunWatchGuarantees needs it empty", prefix, resp.Count)
	}
	r.startRev = uint64(resp.Header.Revision)
	r.watchCtx = ctx
	r.log = newRVLog(r.startRev)

	recCtx, stopRecord := context.WithCancel(clientv3.WithRequireLeader(ctx))
	var recDone <-chan struct{}
	r.recordCtx = recCtx
	r.hist, recDone = recordHistory(recCtx, r.env.Client, prefix, int64(r.startRev+1), truthDecoder(r.env), false)
	defer func() { stopRecord(); <-recDone }()

	progCtx, stopProgress := context.WithCancel(ctx)
	progDone := make(chan struct{})
	if r.opts.NoProgressRequests {
		close(progDone)
	} else {
		go r.requestProgress(progCtx, progDone)
	}
	defer func() { stopProgress(); <-progDone }()

	defer r.stopAll()
	began := time.Now()
	if !r.writeAndWatch(ctx) {
		return
	}
	revs, ok := r.finalHistory(ctx)
	if !ok {
		return
	}
	t.Logf("writes done in %v", time.Since(began).Round(time.Millisecond))
	r.checkAll(ctx, r.snapshotWatchers(), revs, nil)
	t.Logf("watchers checked after %v", time.Since(began).Round(time.Millisecond))
	if t.Failed() {
		return
	}
	r.resume(ctx, revs)
	t.Logf("resumes checked after %v", time.Since(began).Round(time.Millisecond))
}

// requestProgress asks the store for progress notifications while the run
// lasts, so that watchers with bookmarks and progress notify get bookmarks.
func (r *guaranteeRun) requestProgress(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = r.env.Store.RequestWatchProgress(ctx)
		}
	}
}

// writeAndWatch runs the writers and, alongside, starts the watchers, the
// compaction and the probes at compacted RVs. It reports whether the writes
// went through.
func (r *guaranteeRun) writeAndWatch(ctx context.Context) bool {
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	var attempts atomic.Int64
	var wg sync.WaitGroup
	keys := guaranteeKeys(r.opts.Keys)
	for i := range r.opts.Writers {
		w := &writer{env: r.env, rng: newRand(r.opts.Seed, 100+uint64(i)), keys: keys, log: r.log,
			seq: func() string { return strconv.FormatInt(r.seq.Add(1), 10) }}
		wg.Go(func() {
			for attempts.Add(1) <= int64(r.opts.Writes) {
				rv, err := w.step(wctx)
				if err != nil {
					r.t.Errorf("writer %d: %v", i, err)
					abort()
					return
				}
				r.log.record(rv)
			}
		})
	}
	wg.Go(func() { r.spawn(wctx) })
	wg.Wait()
	return !r.t.Failed()
}

// spawn starts opts.Watchers watchers spread over the writes, at RVs seen so
// far; half way through the writes it compacts etcd and probes compacted RVs.
func (r *guaranteeRun) spawn(ctx context.Context) {
	rng := newRand(r.opts.Seed, 1)
	compacted := r.opts.NoCompaction
	for i := range r.opts.Watchers {
		threshold := i * r.opts.Writes / r.opts.Watchers
		if !compacted && threshold >= r.opts.Writes/2 {
			compacted = true
			if !r.compact(ctx, rng) {
				return
			}
		}
		if !r.log.waitWrites(ctx, threshold) {
			return
		}
		lo := r.compactRev.Load() // RVs at or after the compaction stay watchable
		start, ok := r.log.pick(rng, lo, math.MaxUint64, true)
		if !ok {
			r.t.Errorf("no RV at or above %d to start a watcher from", lo)
			return
		}
		if !r.startWatcher(randomSpec(rng, strconv.Itoa(i), start)) {
			return
		}
	}
	if !compacted {
		r.compact(ctx, rng)
	}
}

func (r *guaranteeRun) startWatcher(spec watchSpec) bool {
	w, err := startWatch(r.watchCtx, r.env, spec, &r.compactRev)
	if err != nil {
		r.t.Errorf("%v", err)
		return false
	}
	r.mu.Lock()
	r.watchers = append(r.watchers, w)
	r.mu.Unlock()
	return true
}

// compact compacts etcd to a revision in the middle of those written so far,
// then starts the probes: watches at RVs that compaction removed.
func (r *guaranteeRun) compact(ctx context.Context, rng *rand.Rand) bool {
	rvs := r.log.sorted()
	c := rvs[len(rvs)/2]
	if c < r.startRev+2 {
		r.t.Logf("too few revisions to compact; skipping the compaction")
		return true
	}
	if err := r.waitHistory(ctx, c); err != nil {
		r.t.Errorf("before compacting: %v", err)
		return false
	}
	r.compactRev.Store(c)
	if err := r.env.compact(ctx, int64(c)); err != nil {
		r.t.Errorf("compacting etcd at %d: %v", c, err)
		return false
	}
	r.t.Logf("compacted etcd at revision %d", c)
	for i := range r.opts.GoneProbes {
		start, ok := r.log.pick(rng, 0, c-2, false)
		if !ok {
			return true
		}
		spec := randomSpec(rng, "gone-"+strconv.Itoa(i), start)
		spec.goneRequired = !r.opts.AllowServingCompacted
		if !r.startWatcher(spec) {
			return false
		}
	}
	return true
}

// waitHistory waits until the ground truth holds every revision up to rev,
// asking etcd for progress notifications on the recording watch meanwhile.
func (r *guaranteeRun) waitHistory(ctx context.Context, rev uint64) error {
	wctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.hist.waitFor(wctx, rev) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			_ = r.env.Client.RequestProgress(r.recordCtx)
		}
	}
}

// finalHistory waits until the ground truth holds every write and returns it.
func (r *guaranteeRun) finalHistory(ctx context.Context) ([]truthRevision, bool) {
	resp, err := r.env.Client.Get(ctx, r.env.etcdResourcePrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		r.t.Errorf("reading etcd's revision: %v", err)
		return nil, false
	}
	if err := r.waitHistory(ctx, uint64(resp.Header.Revision)); err != nil {
		r.t.Errorf("after the writes: %v", err)
		return nil, false
	}
	revs := r.hist.snapshot()
	events := 0
	for _, rv := range revs {
		events += len(rv.events)
	}
	r.t.Logf("ground truth: %d revisions, %d events, revisions %d..%d", len(revs), events, r.startRev+1, resp.Header.Revision)
	return revs, true
}

func (r *guaranteeRun) snapshotWatchers() []*watchRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*watchRun(nil), r.watchers...)
}

// stopAll stops every watcher the run started.
func (r *guaranteeRun) stopAll() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, w := range r.snapshotWatchers() {
		if err := w.stop(ctx); err != nil {
			r.t.Error(err)
		}
	}
}

// checkAll waits until every watcher in ws has received all the events the
// ground truth says it must (or ended), stops them and runs the checkers.
// extra, when non-nil, adds violations for a watcher (the resume check).
func (r *guaranteeRun) checkAll(ctx context.Context, ws []*watchRun, revs []truthRevision,
	extra func(i int, s *stream) []string) {
	expected := r.waitComplete(ctx, ws, revs)
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var rep report
	for i, w := range ws {
		if err := w.stop(sctx); err != nil {
			r.t.Error(err)
		}
		s := w.stream(expected[i])
		s.lenientCompaction = r.opts.LenientCompactionErrors
		s.goneRequired = w.spec.goneRequired && !s.endedGone()
		v := checkStream(s)
		if extra != nil {
			v = append(v, extra(i, s)...)
		}
		rep.add(r.t, w.spec, s, v)
	}
	rep.finish(r.t, len(ws))
}

// waitComplete computes each watcher's expected stream and waits (bounded
// by opts.Timeout) until each has seen its last expected RV, with all
// its events there, or ended.
func (r *guaranteeRun) waitComplete(ctx context.Context, ws []*watchRun, revs []truthRevision) [][]expectedEvent {
	wctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	expected := make([][]expectedEvent, len(ws))
	stalled := 0
	for i, w := range ws {
		expected[i] = expectedStream(revs, w.spec.start, math.MaxUint64, w.match)
		var target uint64
		atTarget := 0
		if n := len(expected[i]); n > 0 {
			target = expected[i][n-1].RV
			for j := n - 1; j >= 0 && expected[i][j].RV == target; j-- {
				atTarget++
			}
		}
		if !w.waitUntil(wctx, target, atTarget) {
			stalled++
		}
	}
	if stalled > 0 {
		r.t.Errorf("%d watchers did not receive all their events within %v", stalled, r.opts.Timeout)
	}
	return expected
}

// report tallies the checked streams and reports the first violations.
type report struct {
	failed, events, bookmarks, gone int
	byChecker                       map[string]int
}

// maxReported is how many failing watchers are printed in full.
const maxReported = 5

func (rep *report) add(t *testing.T, spec watchSpec, s *stream, v []string) {
	for _, e := range s.events {
		switch {
		case e.isData():
			rep.events++
		case e.Type == watch.Bookmark:
			rep.bookmarks++
		}
	}
	if s.endedGone() {
		rep.gone++
	}
	if len(v) == 0 {
		return
	}
	rep.failed++
	if rep.byChecker == nil {
		rep.byChecker = map[string]int{}
	}
	named := map[string]bool{}
	for _, x := range v {
		if name, _, _ := strings.Cut(x, ":"); !named[name] {
			named[name] = true
			rep.byChecker[name]++
		}
	}
	if rep.failed <= maxReported {
		t.Errorf("%v (%d events, %d expected) violates:\n  %s\n  received: %s", spec, len(s.events),
			len(s.expected), strings.Join(capList(v, 10), "\n  "), formatEvents(s.events, 40))
	}
}

func (rep *report) finish(t *testing.T, watchers int) {
	if rep.failed > maxReported {
		t.Errorf("... and %d more watchers with violations", rep.failed-maxReported)
	}
	if rep.failed > 0 {
		t.Errorf("watchers failing each checker: %v", rep.byChecker)
	}
	t.Logf("checked %d watchers (%d events, %d bookmarks, %d ended by compaction): %d with violations",
		watchers, rep.events, rep.bookmarks, rep.gone, rep.failed)
}

func capList(v []string, n int) []string {
	if len(v) <= n {
		return v
	}
	return append(v[:n:n], fmt.Sprintf("... %d more", len(v)-n))
}

func formatEvents(evs []observedEvent, n int) string {
	var b strings.Builder
	for i, e := range evs {
		if i == n {
			fmt.Fprintf(&b, " ... (%d more)", len(evs)-n)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.String())
	}
	return b.String()
}
