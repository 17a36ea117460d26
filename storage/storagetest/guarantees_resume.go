package storagetest

import (
	"context"
	"math/rand/v2"
)

// resume re-watches a sample of the watchers from an RV each saw and checks
// that the new stream is the old one's suffix.
func (r *guaranteeRun) resume(ctx context.Context, revs []truthRevision) {
	rng := newRand(r.opts.Seed, 2)
	orig := r.snapshotWatchers()
	c := r.compactRev.Load()
	var origs []*watchRun
	var resumed []*watchRun
	var froms []uint64
	for _, i := range rng.Perm(len(orig)) {
		if len(resumed) == r.opts.Resumes {
			break
		}
		o := orig[i]
		s := o.stream(nil)
		s.lenientCompaction = r.opts.LenientCompactionErrors
		if o.w == nil || s.endedGone() {
			continue
		}
		from := pickSeen(rng, s, c)
		spec := o.spec
		spec.id, spec.start = "resume-"+o.spec.id, from
		spec.goneRequired = c > 0 && from+2 <= c && !r.opts.AllowServingCompacted
		w, err := startWatch(ctx, r.env, spec, &r.compactRev)
		if err != nil {
			r.t.Error(err)
			return
		}
		origs, resumed, froms = append(origs, o), append(resumed, w), append(froms, from)
	}
	r.mu.Lock()
	r.watchers = append(r.watchers, resumed...)
	r.mu.Unlock()
	r.checkAll(ctx, resumed, revs, func(i int, s *stream) []string {
		var out []string
		o := origs[i].stream(nil)
		o.lenientCompaction = r.opts.LenientCompactionErrors
		for _, v := range checkResumable(o, s, froms[i]) {
			out = append(out, "checkResumable: "+v)
		}
		return out
	})
}

// pickSeen picks an RV the watcher saw (its start, an event's or a
// bookmark's), preferring ones the compaction at c kept.
func pickSeen(rng *rand.Rand, s *stream, c uint64) uint64 {
	seen := []uint64{s.start}
	for _, e := range s.events {
		if e.RV > 0 {
			seen = append(seen, e.RV)
		}
	}
	var kept []uint64
	for _, rv := range seen {
		if c == 0 || rv >= c {
			kept = append(kept, rv)
		}
	}
	if len(kept) > 0 {
		seen = kept
	}
	return seen[rng.IntN(len(seen))]
}
