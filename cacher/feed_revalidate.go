package cacher

import (
	"context"
	"errors"
	"time"

	"github.com/listwatch/listwatch/storage"
)

// errTransformerChanged is why the reflector relists after the storage's
// value transformer was replaced.
var errTransformerChanged = errors.New("the storage's value transformer changed")

// Transformer changes. The cache holds objects decoded through the storage's
// transformer at the time they arrived. When the storage replaces it
// (storage.TransformerObserver: keys rotated or removed, an encryption
// configuration reloaded), a stored value may no longer read as the cache
// holds it, or not read at all. From the change on, and until a list made
// through the new transformer has replaced the cache's content, reads are
// served by the storage, so they answer exactly as the storage does; if that
// list fails on unreadable values, the cache re-initialises (every watch ends
// with the storage's error) and reads stay with the storage until the values
// are readable again or gone.
//
// distrustGen counts changes (and divergences the consistency check found,
// see feed_consistency.go); trustedGen is the count when the list that filled
// the cache started. Both only grow, so a change racing with a list always
// leaves the cache untrusted until the next list.

// watchTransformer registers with the storage, when it reports transformer
// changes; the returned function unregisters.
func (f *feed) watchTransformer() (unregister func()) {
	o, ok := f.store.(storage.TransformerObserver)
	if !ok {
		return func() {}
	}
	return o.OnTransformerChange(f.transformerChanged)
}

// transformerChanged is called by the storage, synchronously, after it
// replaced its transformer: from here on reads go to the storage, and the
// reflector lists again.
func (f *feed) transformerChanged() {
	gen := f.distrustGen.Add(1)
	rv, _ := f.cache.RV()
	f.log.Info("cacher: storage transformer changed; serving reads from the storage until the cache is relisted",
		"prefix", f.prefix, "rv", rv, "generation", gen)
	f.askRelist(errTransformerChanged)
}

// trusted reports whether the cache's content was read through the
// storage's current transformer.
func (f *feed) trusted() bool { return f.trustedGen.Load() == f.distrustGen.Load() }

// askRelist makes the reflector end its watch and list again, with why as
// the reason; a request already pending covers this one.
func (f *feed) askRelist(why error) {
	select {
	case f.relist <- why:
	default:
	}
}

// drainRelist drops a pending relist request: the reflector is about to
// list anyway.
func (f *feed) drainRelist() {
	select {
	case <-f.relist:
	default:
	}
}

// revalidatePoll is how often a watch waiting for the cache to be
// revalidated checks it.
const revalidatePoll = 10 * time.Millisecond

// waitServable waits, at most ReadyWaitTimeout, until the cache is ready
// and its content trusted; otherwise it returns a not-ready error (or
// ctx's).
func (f *feed) waitServable(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.ReadyWaitTimeout)
	defer cancel()
	for {
		if err := f.cache.WaitUntilFresh(ctx, 0); err != nil {
			return err
		}
		if f.trusted() {
			return nil
		}
		// Revalidating after a transformer change (rare and short): poll.
		t := f.clk.wall.NewTimer(revalidatePoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1,
				Msg: "watch cache is being relisted (its storage's transformer changed, or it diverged from the storage)", Err: ctx.Err()}
		case <-t.C():
		}
	}
}
