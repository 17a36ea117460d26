package cacher

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// maxReportedDiffs bounds how many differing keys a check remembers (and
// logs a few of); the count is always exact.
const maxReportedDiffs = 100

// keyDiff is a key whose object differs between the cache and the storage
// at one revision: its RV in each (0: absent).
type keyDiff struct {
	key            string
	cache, storage uint64
}

// consistencyReport is the result of one comparison.
type consistencyReport struct {
	rv      uint64    // the revision compared at
	keys    int       // keys seen in the cache or the storage
	diffs   []keyDiff // the first maxReportedDiffs differences
	ndiffs  int       // all differences
	skipped bool      // no verdict: not ready, or rv compacted meanwhile
}

// consistencyLoop compares the cache with the storage every
// ConsistencyCheckInterval (jittered) until ctx ends, if the storage can
// list key versions. A check is skipped while the cache is not trusted (a
// relist it, or a transformer change, asked for is still to land), so that
// at most one relist is in flight and a check never compares a cache
// already known to be stale.
func (f *feed) consistencyLoop(ctx context.Context) {
	lister, ok := f.store.(storage.KeyVersionLister)
	if !ok || f.cfg.ConsistencyCheckInterval < 0 {
		return
	}
	var last repairMemo
	for {
		t := f.clk.sched.NewTimer(wait.Jitter(f.cfg.ConsistencyCheckInterval, 0.2))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if !f.trusted() {
			continue
		}
		rep, err := f.compareWithStorage(ctx, lister)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return
		case err != nil:
			if ctx.Err() == nil {
				f.log.Warn("cacher: consistency check failed", "prefix", f.prefix, "err", err)
			}
		case !rep.skipped:
			f.act(rep, &last)
		}
	}
}

// repairMemo is what the last repair found: the differences a relist was
// asked to remove, and whether they were reported as persisting.
type repairMemo struct {
	diffs    map[keyDiff]bool
	reported bool
}

// persists reports whether rep found exactly the differences of the last
// repair, unchanged: the relist did not remove them, so they are in the
// storage itself (an object stored at a key that does not match its
// metadata), and relisting again would only repeat the same.
func (m *repairMemo) persists(rep consistencyReport) bool {
	if m.diffs == nil || rep.ndiffs != len(rep.diffs) || len(rep.diffs) != len(m.diffs) {
		return false
	}
	for _, d := range rep.diffs {
		if !m.diffs[d] {
			return false
		}
	}
	return true
}

// act handles a comparison: a consistent cache clears the memo; a
// difference that survived a relist unchanged is reported once (log and
// Metrics.DivergencePersists) and left alone; any other difference is
// repaired (see repair) and remembered.
func (f *feed) act(rep consistencyReport, last *repairMemo) {
	switch {
	case rep.ndiffs == 0:
		*last = repairMemo{}
		f.cfg.Metrics.ConsistencyChecked(true)
		f.log.Info("cacher: cache consistent with the storage", "prefix", f.prefix, "rv", rep.rv, "keys", rep.keys)
	case last.persists(rep):
		if !last.reported {
			last.reported = true
			f.cfg.Metrics.DivergencePersists()
			f.log.Error("cacher: the cache still differs from the storage after a relist, in the same keys: "+
				"the storage holds objects at keys that do not match their metadata; not relisting again",
				"prefix", f.prefix, "rv", rep.rv, "differingKeys", rep.ndiffs, "first", diffSample(rep.diffs))
		}
	default:
		f.cfg.Metrics.ConsistencyChecked(false)
		*last = repairMemo{diffs: map[keyDiff]bool{}}
		for _, d := range rep.diffs {
			last.diffs[d] = true
		}
		f.repair(rep)
	}
}

// compareWithStorage compares the keys and resource versions of the cache's
// current state with the storage's at the same revision. It reads a
// snapshot of the cache (copy-on-write, no lock held while comparing) and a
// keys-only range of the storage: no value is read or decoded, and neither
// writes nor dispatch wait for it. The corrupt keys (undecodable objects,
// objects the cache cannot hold: feed_corrupt.go) are not differences: the
// storage serves them, and a relist would not bring them into the cache.
func (f *feed) compareWithStorage(ctx context.Context, lister storage.KeyVersionLister) (consistencyReport, error) {
	if _, ready := f.cache.RV(); !ready {
		return consistencyReport{skipped: true}, nil
	}
	res, err := f.cache.List(0, watchcache.NotOlderThan, watchcache.ListOptions{Key: f.prefix, Recursive: true})
	if err != nil {
		return consistencyReport{skipped: true}, nil
	}
	rep := consistencyReport{rv: res.RV}
	corrupt := f.knownCorrupt()
	note := func(d keyDiff) {
		if _, known := slices.BinarySearch(corrupt, d.key); known {
			return // served by the storage, not the cache (feed_corrupt.go)
		}
		rep.ndiffs++
		if len(rep.diffs) < maxReportedDiffs {
			rep.diffs = append(rep.diffs, d)
		}
	}
	items := res.Items
	err = lister.KeyVersions(ctx, f.prefix, int64(res.RV), func(kv storage.KeyVersion) error {
		rep.keys++
		for len(items) > 0 && items[0].Key < kv.Key {
			note(keyDiff{key: items[0].Key, cache: items[0].RV})
			items = items[1:]
		}
		if len(items) > 0 && items[0].Key == kv.Key {
			if items[0].RV != kv.RV {
				note(keyDiff{key: kv.Key, cache: items[0].RV, storage: kv.RV})
			}
			items = items[1:]
			return nil
		}
		note(keyDiff{key: kv.Key, storage: kv.RV})
		return nil
	})
	if errors.Is(err, storage.ErrGone) {
		return consistencyReport{skipped: true}, nil
	}
	if err != nil {
		return rep, err
	}
	for _, el := range items {
		rep.keys++
		note(keyDiff{key: el.Key, cache: el.RV})
	}
	return rep, nil
}

// diffSample formats the first few differences for a log line.
func diffSample(diffs []keyDiff) []string {
	sample := make([]string, 0, 5)
	for _, d := range diffs[:min(5, len(diffs))] {
		sample = append(sample, fmt.Sprintf("%s (cache RV %d, storage RV %d)", d.key, d.cache, d.storage))
	}
	return sample
}

// repair acts on a difference: log the first differing keys, stop trusting
// the cache (from here until the relist lands, reads and new watches are
// served as while revalidating: by the storage, see trusted), end every
// watch whose scope holds a differing key, in live dispatch or catching up
// (their clients relist), and make the reflector relist. The other watches
// stay: after the relist they catch up from the storage's history from
// where they are, as after any relist.
func (f *feed) repair(rep consistencyReport) {
	f.distrustGen.Add(1)
	f.log.Error("cacher: cache differs from the storage; serving from the storage and relisting", "prefix", f.prefix,
		"rv", rep.rv, "differingKeys", rep.ndiffs, "first", diffSample(rep.diffs))
	all := rep.ndiffs > len(rep.diffs) // not every differing key is known
	_ = f.hub.Commit(func(tx hub.Tx) error {
		tx.AbortOpen(func(w *hub.Spec) error {
			if all {
				return fmt.Errorf("%w at revision %d (%d keys); list again", watcher.ErrDiverged, rep.rv, rep.ndiffs)
			}
			for _, d := range rep.diffs {
				if w.InScope(d.key) {
					return fmt.Errorf("%w at revision %d (key %s); list again", watcher.ErrDiverged, rep.rv, d.key)
				}
			}
			return nil
		})
		return nil
	})
	f.askRelist(fmt.Errorf("%w at revision %d", watcher.ErrDiverged, rep.rv))
}
