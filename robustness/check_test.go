package robustness

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// checkName names one of the suite's checks.
type checkName string

const (
	checkLinearizable checkName = "linearizable"  // (a) porcupine per key, and consistent lists fresh
	checkReadAtRV     checkName = "read-at-rv"    // (b) reads at an RV equal etcd's state at it
	checkWatch        checkName = "watch"         // (c) the six watch guarantees, resumes included
	checkLost         checkName = "lost-write"    // (d) no acknowledged write lost
	checkErrors       checkName = "typed-errors"  // (e) typed errors, answered before the deadline
	checkHistory      checkName = "history-valid" // the run itself (faults repaired, history recorded)
)

var allChecks = []checkName{checkLinearizable, checkReadAtRV, checkWatch, checkLost, checkErrors, checkHistory}

// violation is one broken promise, found at a moment of the run.
type violation struct {
	Check checkName
	ID    int           // the request's ID (0: none)
	At    time.Duration // the call time of the request that showed it
	Op    string
	What  string
}

// result is what the checks found in one run.
type result struct {
	cfg  runConfig
	took time.Duration // the traffic's
	// checkTook is the checks' time.
	checkTook time.Duration
	truth     *truth
	changes   int // etcd's changes of the run's keys
	finalRV   uint64

	requests, watchStarts int
	writes, reads, failed int
	watches, resumes      int
	finalWatches, stalled int
	events                int
	watchErrors           map[int32]int // error events ending watches, by status code
	errorsByCode          map[string]int
	faults                []faultRecord
	longest               time.Duration
	longestOp             string
	modelOps              int
	badKeys, undecided    []string

	violations []violation
}

func (res *result) add(c checkName, o *op, what string) {
	v := violation{Check: c, What: what}
	if o != nil {
		v.At, v.Op, v.ID = o.Call, o.String(), o.ID
	}
	res.violations = append(res.violations, v)
}

// of returns the violations of check c, earliest first.
func (res *result) of(c checkName) []violation {
	var out []violation
	for _, v := range res.violations {
		if v.Check == c {
			out = append(out, v)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

// check runs every check on the recorded run, reporting each one's
// progress and time.
func (r *run) check(took time.Duration, finalRV uint64) *result {
	begin := time.Now()
	changes := r.hist.Changes()
	res := &result{cfg: r.cfg, took: took, truth: newTruth(changes), changes: len(changes), finalRV: finalRV,
		watchErrors: map[int32]int{}, errorsByCode: map[string]int{}}
	ops := r.rec.all()
	r.mu.Lock()
	watches, starts := slices.Clone(r.watches), slices.Clone(r.watchStarts)
	res.faults = slices.Clone(r.faults)
	r.mu.Unlock()
	r.progress("%d requests, %d watches, %d etcd changes to check", len(ops), len(watches), len(changes))
	for _, f := range res.faults {
		if f.Err != "" {
			res.add(checkHistory, nil, fmt.Sprintf("fault %s on %s at %v: %s", f.Kind, f.Target, f.Start, f.Err))
		}
	}
	step := func(name checkName, f func()) {
		t0 := time.Now()
		f()
		r.progress("%s done in %v (%d violations)", name, time.Since(t0).Round(time.Millisecond), len(res.of(name)))
	}
	step(checkLinearizable, func() { r.checkLinearizable(res, ops) })
	step(checkReadAtRV, func() { r.checkReadsAtRV(res, ops) })
	step(checkWatch, func() { r.checkWatches(res, watches) })
	step(checkLost, func() { r.checkLostWrites(res, ops) })
	res.requests, res.watchStarts = len(ops)+len(starts), len(starts)
	step(checkErrors, func() { r.checkErrors(res, append(ops, starts...)) })
	res.checkTook = time.Since(begin)
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	r.progress("all done in %v; heap %d MB in use, %d MB obtained from the OS; the replicas' log %d MB",
		res.checkTook.Round(time.Millisecond), m.HeapInuse>>20, m.Sys>>20, r.log.size()>>20)
	return res
}

// checkLinearizable: (a) writes and consistent reads of each key are
// linearizable, and a consistent list is at an RV no older than any write
// acknowledged before it began.
func (r *run) checkLinearizable(res *result, ops []*op) {
	hist := modelOps(ops, r.keys, res.truth)
	for _, h := range hist {
		res.modelOps += len(h)
	}
	res.badKeys, res.undecided = linearizable(hist, 20*time.Second, r.progress)
	for _, k := range res.badKeys {
		o := firstIllegal(hist[k])
		res.add(checkLinearizable, o, fmt.Sprintf("the history of %s is not linearizable from request #%d on", k, o.ID))
	}
	// Freshness, over all keys at once: writes by return time.
	var acked []*op
	for _, o := range ops {
		if o.Kind.write() && !o.failed() && o.RV > 0 {
			acked = append(acked, o)
		}
	}
	sort.Slice(acked, func(i, j int) bool { return acked[i].Return < acked[j].Return })
	newestBy := make([]*op, len(acked)) // newestBy[i]: the highest-RV write among acked[:i+1]
	for i, w := range acked {
		newestBy[i] = w
		if i > 0 && newestBy[i-1].RV > w.RV {
			newestBy[i] = newestBy[i-1]
		}
	}
	for _, o := range ops {
		if o.Kind != opList || o.Mode != rvConsistent || o.failed() {
			continue
		}
		n := sort.Search(len(acked), func(i int) bool { return acked[i].Return >= o.Call })
		if n == 0 {
			continue
		}
		if newest := newestBy[n-1]; o.RV < newest.RV {
			res.add(checkLinearizable, o, fmt.Sprintf("consistent list at RV %d misses write %s acknowledged before it began", o.RV, newest))
		}
	}
}

// firstIllegal returns the request that makes a key's history not
// linearizable: the last call of the shortest prefix (by call time) that
// is not.
func firstIllegal(hist []porcupine.Operation) *op {
	h := slices.Clone(hist)
	sort.Slice(h, func(i, j int) bool { return h[i].Call < h[j].Call })
	lo, hi := 1, len(h) // the prefix of length hi is illegal
	for lo < hi {
		mid := (lo + hi) / 2
		if porcupine.CheckOperationsTimeout(keyModel, h[:mid], 5*time.Second) == porcupine.Illegal {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return h[hi-1].Metadata.(*op)
}

// checkReadsAtRV: (b) every list equals etcd's state at its RV (and that
// RV is the one asked for: exactly, or not older); every get at an RV
// returns a version etcd had, current at or after the RV asked for.
func (r *run) checkReadsAtRV(res *result, ops []*op) {
	for _, o := range ops {
		if o.Kind.write() || o.failed() {
			continue
		}
		res.reads++
		switch o.Kind {
		case opList:
			if o.Mode == rvExact && o.RV != o.ReqRV {
				res.add(checkReadAtRV, o, fmt.Sprintf("exact list at %d answered at RV %d", o.ReqRV, o.RV))
			}
			if o.Mode == rvNotOlderThan && o.RV < o.ReqRV {
				res.add(checkReadAtRV, o, fmt.Sprintf("list not older than %d answered at RV %d", o.ReqRV, o.RV))
			}
			if o.RV > res.finalRV && res.finalRV != 0 {
				res.add(checkReadAtRV, o, fmt.Sprintf("list at RV %d, beyond etcd's %d", o.RV, res.finalRV))
			}
			if d := res.truth.diff(o.RV, o.Label, o.Items); d != "" {
				res.add(checkReadAtRV, o, fmt.Sprintf("list at RV %d differs from etcd's state: %s", o.RV, d))
			}
		case opGet:
			if o.Mode == rvConsistent {
				continue // judged by the linearizability check
			}
			if !o.Found {
				if o.Mode == rvNotOlderThan && !res.truth.absentFrom(o.Key, o.ReqRV) {
					res.add(checkReadAtRV, o, fmt.Sprintf("not found, but %s existed at every revision from %d", o.Key, o.ReqRV))
				}
				continue
			}
			v, ok := res.truth.bySeq[o.GotSeq]
			switch {
			case !ok || v.rev != o.RV:
				res.add(checkReadAtRV, o, fmt.Sprintf("etcd never held %s seq %s at RV %d", o.Key, o.GotSeq, o.RV))
			case o.Mode == rvNotOlderThan:
				if n := res.truth.next(o.Key, v.rev); n != 0 && n <= o.ReqRV {
					res.add(checkReadAtRV, o, fmt.Sprintf("version at RV %d was replaced at %d, before the %d asked for", v.rev, n, o.ReqRV))
				}
			}
		}
	}
}

// checkWatches: (c) the six guarantees on every watch, and a resume from
// an RV the previous watch saw repeats exactly what it received after it.
func (r *run) checkWatches(res *result, watches []*watchRec) {
	v := storage.APIObjectVersioner{}
	byID := map[int]*watchRec{}
	for _, w := range watches {
		byID[w.ID] = w
	}
	for i, w := range watches {
		if i > 0 && i%1000 == 0 {
			r.progress("watch: %d of %d watches checked", i, len(watches))
		}
		if w.StartErr != nil {
			continue
		}
		res.watches++
		rec := w.Rec
		if w.Final {
			res.finalWatches++
		}
		if w.Stalled != "" {
			res.stalled++
			res.add(checkWatch, &op{ID: w.ID, Client: 1000 + w.Watcher, Replica: w.Replica, Kind: opWatch,
				Mode: rvNotOlderThan, ReqRV: rec.Start, Label: rec.Label, Call: w.Call}, w.Stalled)
		}
		if st, ok := errorStatus(rec); ok && st.Code != 410 {
			// The watch was ended in-band for another reason than a
			// compaction (the cacher re-initialising, etcd lost): allowed,
			// never silently; what came before it is judged as a watch the
			// client stopped there.
			res.watchErrors[st.Code]++
			rec.Events = rec.Events[:len(rec.Events)-1]
		} else if ok {
			res.watchErrors[st.Code]++
		} else if endedWithError(rec) {
			o := &op{ID: w.ID, Call: w.Call}
			res.add(checkErrors, o, fmt.Sprintf("watch %d ended with an untyped error event %T", w.ID, rec.Events[len(rec.Events)-1].Object))
			rec.Events = rec.Events[:len(rec.Events)-1]
		}
		for _, ev := range rec.Events {
			if ev.Type != watch.Bookmark && ev.Type != watch.Error {
				res.events++
			}
		}
		wo := &op{ID: w.ID, Client: 1000 + w.Watcher, Replica: w.Replica, Kind: opWatch, Mode: rvNotOlderThan,
			ReqRV: rec.Start, Label: rec.Label, Call: w.Call}
		for _, s := range r.hist.CheckWatch(v, widget.GetAttrs, rec) {
			res.add(checkWatch, wo, fmt.Sprintf("watch %d from RV %d on replica %d: %s", w.ID, rec.Start, w.Replica, s))
		}
		if p, ok := byID[w.ResumeOf]; ok {
			res.resumes++
			for _, s := range r.hist.CheckResume(v, widget.GetAttrs, p.Rec, rec, rec.Start) {
				res.add(checkWatch, wo, fmt.Sprintf("watch %d resuming watch %d from RV %d on replica %d: %s", w.ID, p.ID, rec.Start, w.Replica, s))
			}
		}
	}
}

// checkLostWrites: (d) every acknowledged write is in etcd's history, at
// the RV it was acknowledged with.
func (r *run) checkLostWrites(res *result, ops []*op) {
	for _, o := range ops {
		if !o.Kind.write() {
			continue
		}
		res.writes++
		if o.failed() {
			continue
		}
		switch o.Kind {
		case opCreate, opUpdate, opCASUpdate:
			v, ok := res.truth.bySeq[o.Seq]
			switch {
			case !ok:
				res.add(checkLost, o, "acknowledged write is not in etcd's history")
			case v.rev != o.RV:
				res.add(checkLost, o, fmt.Sprintf("acknowledged at RV %d, etcd wrote it at %d", o.RV, v.rev))
			}
		default:
			if !res.truth.deletedVersion(o.Key, o.GotSeq) {
				res.add(checkLost, o, fmt.Sprintf("acknowledged delete of seq %s is not in etcd's history", o.GotSeq))
			}
		}
	}
}

// documentedCodes are the storage errors a request may fail with under
// faults and contention.
var documentedCodes = map[storage.Code]string{
	storage.CodeNotFound: "NotFound", storage.CodeKeyExists: "KeyExists", storage.CodeConflict: "Conflict",
	storage.CodeGone: "Gone", storage.CodeTooLargeResourceVersion: "TooLargeResourceVersion",
	storage.CodeNotReady: "NotReady", storage.CodeTimeout: "Timeout", storage.CodeTooManyRequests: "TooManyRequests",
	storage.CodeUnreachable: "Unavailable",
}

// checkErrors: (e) every error is a typed, documented one and every answer
// came before the request's deadline (with deadlineSlack).
func (r *run) checkErrors(res *result, ops []*op) {
	for _, o := range ops {
		if o.Aborted {
			continue
		}
		d := o.Return - o.Call
		if d > res.longest {
			res.longest, res.longestOp = d, o.String()
		}
		if d > requestDeadline+deadlineSlack {
			res.add(checkErrors, o, fmt.Sprintf("answered after %v (deadline %v)", d.Round(time.Millisecond), requestDeadline))
		}
		if !o.failed() {
			continue
		}
		res.failed++
		name, ok := documentedCodes[o.errCode]
		if !o.typed || !ok {
			res.add(checkErrors, o, "error is not a typed, documented storage error")
			name = "untyped"
		}
		res.errorsByCode[name]++
	}
}

// table is the run's summary, one line per figure.
func (res *result) table() string {
	var b strings.Builder
	faults := map[faultKind]int{}
	for _, f := range res.faults {
		if f.Err == "" {
			faults[f.Kind]++
		}
	}
	var fk []string
	n := 0
	for _, k := range allFaults {
		if faults[k] > 0 {
			fk = append(fk, fmt.Sprintf("%s %d", k, faults[k]))
			n += faults[k]
		}
	}
	fmt.Fprintf(&b, "| seed | %d |\n", res.cfg.Seed)
	fmt.Fprintf(&b, "| traffic | %v, %d replicas, %d clients, %d watchers, %d keys |\n", res.took.Round(time.Second), res.cfg.Replicas, res.cfg.Clients, res.cfg.Watchers, res.cfg.Keys)
	fmt.Fprintf(&b, "| requests checked | %d (%d writes, %d reads answered, %d watch starts; %d errors: %v) |\n", res.requests, res.writes, res.reads, res.watchStarts, res.failed, res.errorsByCode)
	fmt.Fprintf(&b, "| porcupine operations | %d over %d keys (%d undecided in time) |\n", res.modelOps, res.cfg.Keys, len(res.undecided))
	fmt.Fprintf(&b, "| watches checked | %d (%d resumes, %d final ones told about etcd's final revision), %d events; ended in-band: %v |\n",
		res.watches, res.resumes, res.finalWatches-res.stalled, res.events, res.watchErrors)
	fmt.Fprintf(&b, "| faults survived | %d: %s |\n", n, strings.Join(fk, ", "))
	fmt.Fprintf(&b, "| etcd revisions | %d changes of the run's keys, up to revision %d |\n", res.changes, res.finalRV)
	var vs []string
	for _, c := range allChecks {
		vs = append(vs, fmt.Sprintf("%s %d", c, len(res.of(c))))
	}
	fmt.Fprintf(&b, "| violations | %d (%s) |\n", len(res.violations), strings.Join(vs, ", "))
	fmt.Fprintf(&b, "| checks took | %v |\n", res.checkTook.Round(time.Second))
	fmt.Fprintf(&b, "| longest wait | %v (%s) |\n", res.longest.Round(time.Millisecond), res.longestOp)
	return b.String()
}
