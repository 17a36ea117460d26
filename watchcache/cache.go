package watchcache

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache/internal/pack"
)

// Cache is the watch cache of one resource. See the package doc for the
// contract. All fields below mu are guarded by it.
type Cache struct {
	cfg  Config
	defs []indexDef
	// packer makes what the cache keeps smaller (Config.NoPacking).
	packer pack.Packer
	// dec is set when the cache keeps objects encoded (Config.Codec).
	dec *decoder

	mu sync.RWMutex
	// rv is the newest revision the cache is known to hold completely: no
	// event at or below it can arrive any more. It advances with progress
	// notifications and, when an event of a newer revision arrives, to the
	// revision before it (a revision's events are applied one by one).
	rv uint64
	// latest is the RV of the newest event applied (its revision may still
	// be incomplete).
	latest uint64
	// liveFrom is the RV of the newest applied event (or of the list): the
	// live state is the state of every RV in [liveFrom, rv].
	liveFrom uint64
	// liveSnapshotted is true when snaps already holds the live state at liveFrom.
	liveSnapshotted bool
	// seq counts the events recorded (it spaces the snapshots out).
	seq uint64
	// oldest is the lowest RV r for which every event after r is in the ring.
	oldest uint64
	// compacted is the storage's compaction revision: state and events
	// before it are treated as gone, as the storage would.
	compacted uint64
	// ready is false until the first Replace.
	ready bool
	live  *state
	snaps snapshots
	ring  *ring
	// changed is closed (and replaced) whenever rv advances.
	changed chan struct{}
	// stats
	resizes int
}

// New returns an empty, not yet ready cache.
func New(cfg Config) (*Cache, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Cache{cfg: cfg, changed: make(chan struct{}), packer: pack.New()}
	if cfg.NoPacking {
		c.packer = pack.Off()
	}
	if cfg.Codec != nil {
		c.dec = &decoder{codec: cfg.Codec, packer: c.packer}
	}
	for _, l := range cfg.IndexLabels {
		c.defs = append(c.defs, indexDef{name: LabelIndex(l), label: true, attr: l})
	}
	for _, f := range cfg.IndexFields {
		c.defs = append(c.defs, indexDef{name: FieldIndex(f), attr: f})
	}
	c.live = newState(c.defs)
	c.snaps.max, c.snaps.spaced = cfg.MaxSnapshots, cfg.SpacedSnapshots
	c.ring = newRing(cfg.MinCapacity, cfg.MaxCapacity, cfg.Window)
	return c, nil
}

// element builds the Element of obj. With a Codec, hot says whether the
// element keeps a weak pointer to obj (see decoder.element).
func (c *Cache) element(obj runtime.Object, hot bool) (*Element, error) {
	key, err := c.cfg.KeyFunc(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: key of %T: %w", obj, err)
	}
	if c.dec == nil {
		// The element keeps the object: make it smaller before GetAttrs,
		// which usually returns the object's own (now shared) labels map.
		// An encoded element shares its label set below instead.
		c.packer.Object(obj)
	}
	l, f, err := c.cfg.GetAttrs(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: attributes of %q: %w", key, err)
	}
	rv, err := c.cfg.Versioner.ObjectResourceVersion(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: resourceVersion of %q: %w", key, err)
	}
	if c.dec != nil {
		// The element keeps the label set, not the object: share the set
		// itself (GetAttrs may build a new one per call, as for
		// Unstructured objects, which the packer leaves alone).
		return c.dec.element(key, obj, rv, labels.Set(c.packer.Labels(l)), f, hot)
	}
	return NewElement(key, obj, rv, l, NewFields(f)), nil
}

// Replace makes objs, listed at rv, the whole state, drops the history and
// the snapshots, and marks the cache ready.
func (c *Cache) Replace(objs []runtime.Object, rv uint64) error {
	st := newState(c.defs)
	for _, o := range objs {
		// Listed objects are often items of one list's slice, a single
		// allocation: weak pointers into it are costly (the runtime
		// keeps one record per pointer in the allocation's span, in a
		// sorted list) and would not free anything before the whole list
		// is garbage. Their elements decode on first read instead.
		el, err := c.element(o, false)
		if err != nil {
			return err
		}
		st.put(el)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live, c.liveFrom, c.liveSnapshotted, c.latest = st, rv, false, rv
	c.snaps.reset()
	c.ring.reset()
	c.oldest = rv
	c.ready = true
	c.advanceLocked(rv, true)
	return nil
}

// Invalidate marks the cache not ready, as before its first Replace, until
// the next Replace: its owner can no longer keep it up to date (its
// content is kept, but WaitUntilFresh and readiness report not ready).
func (c *Cache) Invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ready = false
}

// Apply records an Added, Modified or Deleted event of obj at rv and
// returns it. rv must not be below the newest event's RV. Replays are
// ignored (the result is nil without error): events at or below RV(), and
// the same key again at the newest RV (a watch resumed in the middle of a
// revision).
func (c *Cache) Apply(typ watch.EventType, obj runtime.Object, rv uint64) (*Event, error) {
	el, err := c.element(obj, true)
	if err != nil {
		return nil, err
	}
	el.RV = rv
	c.mu.Lock()
	defer c.mu.Unlock()
	if rv == 0 {
		return nil, fmt.Errorf("watchcache: event of %q without a resource version", el.Key)
	}
	if rv <= c.rv && c.ready {
		return nil, nil // a replay of a revision the cache holds completely
	}
	ev := &Event{Type: typ, RV: rv, Cur: el, Time: c.cfg.Clock.Now()}
	if prev, ok := c.live.get(el.Key); ok {
		if prev.RV == rv && rv == c.latest {
			return nil, nil
		}
		ev.Prev = prev
	} else if typ == watch.Deleted && rv == c.latest && c.deletedAtLocked(el.Key, rv) {
		return nil, nil
	}
	if rv <= c.rv || rv < c.latest {
		return nil, fmt.Errorf("watchcache: event at RV %d is not after the cache RV %d (newest event %d)", rv, c.rv, c.latest)
	}
	if err := c.fixTypeLocked(ev); err != nil {
		return nil, err
	}
	if rv != c.liveFrom {
		if c.liveSnapshotted {
			c.snaps.endNewest(rv)
		} else {
			c.snaps.push(snapshot{rv: c.liveFrom, until: rv, seq: c.seq, st: c.live.clone()}, c.oldest)
		}
		c.liveFrom, c.liveSnapshotted = rv, false
	}
	if ev.Type == watch.Deleted {
		c.live.remove(el.Key)
	} else {
		c.live.put(el)
	}
	c.recordLocked(ev)
	c.latest = rv
	c.advanceLocked(rv-1, false)
	return ev, nil
}

// deletedAtLocked reports whether the ring's newest revision rv already
// holds a deletion of key.
func (c *Cache) deletedAtLocked(key string, rv uint64) bool {
	for i := c.ring.n - 1; i >= 0; i-- {
		e := c.ring.at(i)
		if e.RV != rv {
			return false
		}
		if e.Type == watch.Deleted && e.Key() == key {
			return true
		}
	}
	return false
}

// fixTypeLocked reconciles the event type with the state: an update of an
// unknown key is an add, an add of a known key is a modification.
func (c *Cache) fixTypeLocked(ev *Event) error {
	switch ev.Type {
	case watch.Added, watch.Modified:
		if ev.Prev == nil {
			ev.Type = watch.Added
		} else {
			ev.Type = watch.Modified
		}
	case watch.Deleted:
		if ev.Prev == nil {
			ev.Prev = ev.Cur
		}
	default:
		return fmt.Errorf("watchcache: cannot apply a %s event", ev.Type)
	}
	return nil
}

func (c *Cache) recordLocked(ev *Event) {
	c.seq++
	before := c.ring.capacity()
	for _, old := range c.ring.push(ev, ev.Time) {
		c.oldest = max(c.oldest, old.RV)
	}
	if c.ring.capacity() != before {
		c.resizes++
	}
}

// UpdateRV records that every event up to rv has been applied (a progress
// notification) and advances RV() to rv. Lower RVs are ignored.
func (c *Cache) UpdateRV(rv uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.advanceLocked(rv, false)
}

func (c *Cache) advanceLocked(rv uint64, force bool) {
	if rv <= c.rv && !force {
		return
	}
	c.rv = rv
	close(c.changed)
	c.changed = make(chan struct{})
}

// Compact records that the storage compacted its history at rev: from
// then on List(r, Exact) with r < rev fails with a *TooOldError, as the
// storage would, and older snapshots are dropped. The event history is
// kept: whoever serves watches decides whether to replay it (see Compacted).
func (c *Cache) Compact(rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.compacted {
		return
	}
	c.compacted = rev
	c.snaps.trim(rev)
}

// Compacted returns the storage's compaction revision as last recorded by
// Compact, 0 if none.
func (c *Cache) Compacted() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.compacted
}

// RV returns the cache's current RV and whether it is ready.
func (c *Cache) RV() (uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv, c.ready
}

// Oldest returns the lowest RV r such that EventsSince(r) succeeds.
func (c *Cache) Oldest() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.oldest
}

// Stats describes the cache's size.
type Stats struct {
	RV, Oldest      uint64
	Objects, Events int
	Capacity        int
	Snapshots       int
	Resizes         int
}

// Stats returns the cache's current sizes.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{RV: c.rv, Oldest: c.oldest, Objects: c.live.byKey.Len(), Events: c.ring.n,
		Capacity: c.ring.capacity(), Snapshots: len(c.snaps.list), Resizes: c.resizes}
}

// EventsSince returns up to max events with RV > rv, oldest first, extended
// to the end of the last revision it includes, and the cache's RV. max <= 0
// means all. It fails with a *TooOldError when rv < Oldest().
func (c *Cache) EventsSince(rv uint64, max int) ([]*Event, uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil, 0, storage.ErrNotReady
	}
	if rv < c.oldest {
		return nil, c.rv, &TooOldError{Requested: rv, Oldest: c.oldest}
	}
	i := c.ring.firstAfter(rv)
	n := c.ring.n - i
	if max > 0 && n > max {
		n = max
		last := c.ring.at(i + n - 1).RV
		for i+n < c.ring.n && c.ring.at(i+n).RV == last {
			n++
		}
	}
	out := make([]*Event, n)
	for k := range n {
		out[k] = c.ring.at(i + k)
	}
	return out, c.rv, nil
}

// WaitUntilFresh blocks until the cache is ready and its RV is at least rv.
// When ctx ends first it returns a too-large-resource-version error
// (wrapping ctx's error) carrying the cache's RV.
func (c *Cache) WaitUntilFresh(ctx context.Context, rv uint64) error {
	for {
		c.mu.RLock()
		cur, ready, ch := c.rv, c.ready, c.changed
		c.mu.RUnlock()
		if ready && cur >= rv {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			if !ready {
				return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1,
					Msg: "watch cache is not initialized yet", Err: ctx.Err()}
			}
			e := storage.NewTooLargeResourceVersionError(rv, cur, 1)
			e.Err = ctx.Err()
			return e
		}
	}
}

// Fork returns a new ready cache holding this cache's current state at its
// RV, with no history and no snapshots: from then on the two are
// independent (the state is shared copy-on-write, so forking costs O(1)).
// A cacher forks the state it is about to replace so that its watchers can
// catch up through one shared copy of the storage's history applied to it.
// It reports false when the cache is not ready or holds part of a revision.
func (c *Cache) Fork() (*Cache, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready || c.latest > c.rv {
		return nil, false
	}
	f := &Cache{cfg: c.cfg, defs: c.defs, packer: c.packer, dec: c.dec, changed: make(chan struct{})}
	f.live = c.live.clone()
	f.live.remaining = nil // the fork writes its copy: no memo of a frozen state
	f.snaps.max, f.snaps.spaced = c.cfg.MaxSnapshots, c.cfg.SpacedSnapshots
	f.ring = newRing(c.cfg.MinCapacity, c.cfg.MaxCapacity, c.cfg.Window)
	f.rv, f.latest, f.liveFrom, f.oldest, f.compacted, f.ready = c.rv, c.rv, c.rv, c.rv, c.compacted, true
	return f, true
}
