package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// errDiverged is the cause with which the consistency check ends the
// watches whose scope holds a key where the cache differed from the storage.
var errDiverged = errors.New("cacher: the watch cache diverged from the storage")

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
// list key versions.
func (c *Cacher) consistencyLoop(ctx context.Context) {
	lister, ok := c.store.(storage.KeyVersionLister)
	if !ok || c.cfg.ConsistencyCheckInterval < 0 {
		return
	}
	for {
		t := time.NewTimer(wait.Jitter(c.cfg.ConsistencyCheckInterval, 0.2))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		rep, err := c.compareWithStorage(ctx, lister)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return
		case err != nil:
			if ctx.Err() == nil {
				c.log.Warn("cacher: consistency check failed", "prefix", c.prefix, "err", err)
			}
		case !rep.skipped:
			c.repair(rep)
		}
	}
}

// compareWithStorage compares the keys and resource versions of the cache's
// current state with the storage's at the same revision. It reads a
// snapshot of the cache (copy-on-write, no lock held while comparing) and a
// keys-only range of the storage: no value is read or decoded, and neither
// writes nor dispatch wait for it.
func (c *Cacher) compareWithStorage(ctx context.Context, lister storage.KeyVersionLister) (consistencyReport, error) {
	if _, ready := c.cache.RV(); !ready {
		return consistencyReport{skipped: true}, nil
	}
	res, err := c.cache.List(0, watchcache.NotOlderThan, watchcache.ListOptions{Key: c.prefix, Recursive: true})
	if err != nil {
		return consistencyReport{skipped: true}, nil
	}
	rep := consistencyReport{rv: res.RV}
	note := func(d keyDiff) {
		rep.ndiffs++
		if len(rep.diffs) < maxReportedDiffs {
			rep.diffs = append(rep.diffs, d)
		}
	}
	items := res.Items
	err = lister.KeyVersions(ctx, c.prefix, int64(res.RV), func(kv storage.KeyVersion) error {
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

// repair acts on a comparison: nothing when the cache matched; otherwise
// log the first differing keys, count it, end the watches whose scope holds
// a differing key (their clients relist) and make the reflector relist. The
// other watches stay: after the relist they catch up from the storage's
// history from where they are, as after any relist.
func (c *Cacher) repair(rep consistencyReport) {
	c.cfg.Metrics.ConsistencyChecked(rep.ndiffs == 0)
	if rep.ndiffs == 0 {
		c.log.Info("cacher: cache consistent with the storage", "prefix", c.prefix, "rv", rep.rv, "keys", rep.keys)
		return
	}
	sample := make([]string, 0, 5)
	for _, d := range rep.diffs[:min(5, len(rep.diffs))] {
		sample = append(sample, fmt.Sprintf("%s (cache RV %d, storage RV %d)", d.key, d.cache, d.storage))
	}
	c.log.Error("cacher: cache differs from the storage; relisting", "prefix", c.prefix, "rv", rep.rv,
		"differingKeys", rep.ndiffs, "first", sample)
	all := rep.ndiffs > len(rep.diffs) // not every differing key is known
	c.dispatchMu.Lock()
	for w := range c.reg.all {
		if all {
			w.abort(fmt.Errorf("%w at revision %d (%d keys); list again", errDiverged, rep.rv, rep.ndiffs))
			continue
		}
		for _, d := range rep.diffs {
			if w.inScope(d.key) {
				w.abort(fmt.Errorf("%w at revision %d (key %s); list again", errDiverged, rep.rv, d.key))
				break
			}
		}
	}
	c.dispatchMu.Unlock()
	c.askRelist(fmt.Errorf("%w at revision %d", errDiverged, rep.rv))
}
