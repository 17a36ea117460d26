package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
)

// failureClock measures how long the cache's storage watch has been failing
// without progress. Storage outages are not counted: they end by
// themselves, and ending every watch for them would only make every client
// relist when the storage comes back.
type failureClock struct {
	clock clock.PassiveClock
	since time.Time
}

// failed records a failed attempt (err != nil) and returns how long the
// watch has been failing; 0 for errors that do not count.
func (f *failureClock) failed(err error) time.Duration {
	if err == nil || errors.Is(err, errRelist) || errors.Is(err, context.Canceled) || outage(err) {
		return 0
	}
	if f.since.IsZero() {
		f.since = f.clock.Now()
	}
	return max(f.clock.Since(f.since), time.Nanosecond)
}

// outage reports whether err says the storage is unreachable or slow, or
// that its transformer cannot run (CodeInternal, e.g. a key service down),
// directly or as the Status of a storage watch's error event: a relist would
// meet the same condition.
func outage(err error) bool {
	return storage.IsCode(err, storage.CodeUnreachable) || storage.IsCode(err, storage.CodeTimeout) ||
		storage.IsCode(err, storage.CodeInternal) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// left returns how long may still pass before a failing watch must be
// recovered from; the full timeout when nothing is failing.
func (f *failureClock) left(timeout time.Duration) time.Duration {
	if f.since.IsZero() {
		return timeout
	}
	return timeout - f.clock.Since(f.since)
}

func (f *failureClock) reset() { f.since = time.Time{} }

// recoverFailingWatch is what the reflector does when its storage watch
// has kept failing without progress for d (an undecodable value at the
// next revision): the cache stops being trusted (reads and new watches go
// to the storage, see trusted) and the reflector relists, after the
// failing revision. The relist reads around the value it cannot decode
// (see feed_corrupt.go) and ends the watches whose scope held an object that
// can no longer be read; every other watcher catches up from its position
// (one that must replay the failing revision gets the storage's error
// there) and goes on.
func (f *feed) recoverFailingWatch(d time.Duration, cause error) {
	rv, _ := f.cache.RV()
	f.log.Error("cacher: the storage watch keeps failing; serving from the storage and relisting",
		"prefix", f.prefix, "rv", rv, "for", d.Round(time.Millisecond), "err", cause)
	f.cfg.Metrics.Reinitialized()
	f.distrustGen.Add(1)
}

// reinitialize gives up on the cache's content because the storage cannot
// be read as the cache holds it (what says how: a list failed on data it
// could not read around, see feed_listpages.go): the cache stops being ready
// (reads go to the storage, watches wait for the next list or answer
// not-ready), every watch ends with an error event naming cause so its
// client relists, and the reflector lists afresh.
func (f *feed) reinitialize(what string, cause error) {
	rv, _ := f.cache.RV()
	f.log.Error("cacher: "+what+"; ending every watch and re-initialising the cache",
		"prefix", f.prefix, "rv", rv, "err", cause)
	f.cfg.Metrics.Reinitialized()
	f.cache.Invalidate()
	f.runMu.Lock()
	abort := f.abortWatchers
	f.watchersCtx, f.abortWatchers = context.WithCancelCause(f.runCtx)
	f.runMu.Unlock()
	abort(fmt.Errorf("%w: %s at resource version %d: %w", watcher.ErrReinitialized, what, rv, cause))
}
