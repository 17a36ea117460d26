package hub

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/watchcache"
)

const (
	nameField      = "metadata.name"
	namespaceField = "metadata.namespace"
)

// watcherSet is a set of watchers' entries.
type watcherSet map[*Entry]struct{}

// slot is where a live watcher is indexed: byKey (exact key), byPrefix
// (recursive key prefix), byIndex (an exact label or field value) or
// byShard (a recursive key prefix and the hash ranges of a shard selector).
type slot struct {
	kind  slotKind
	index string // byIndex: index name
	value string // the key, prefix or index value
}

type slotKind int

const (
	slotKey slotKind = iota
	slotPrefix
	slotIndex
	slotShard // index: the shard selector's field
)

// dispatchIndex is one label or field whose exact value indexes watchers.
type dispatchIndex struct {
	name  string // watchcache.LabelIndex / FieldIndex name
	label bool
	attr  string
}

func (d dispatchIndex) valueOf(el *watchcache.Element) (string, bool) {
	if d.label {
		v, ok := el.Labels[d.attr]
		return v, ok
	}
	return el.Fields.Lookup(d.attr)
}

// registry holds the live watchers, indexed so that dispatching an event
// visits only the watchers that may match it. Owned by the hub: every
// method must be called with hub.mu held.
type registry struct {
	all      watcherSet
	progress watcherSet // live watchers that asked for storage progress bookmarks
	// BookmarkSlots groups the live watchers that allow bookmarks by their
	// step of the bookmark round (Spec.BookmarkSlot; see BookmarkLoop).
	BookmarkSlots [BookmarkSlots]watcherSet
	byKey         map[string]watcherSet
	byPrefix      map[string]watcherSet
	byIndex       map[string]map[string]watcherSet
	byShard       map[string]map[string]*shardRanges // prefix, then shard field
	indexes       []dispatchIndex                    // the most selective first
	seq           uint64                             // dispatch round, to visit a watcher once per event
	visited       uint64                             // watchers visited by dispatch, in total (cost measure)
	metrics       Metrics

	// log is where dispatch publishes what it hands to live watchers.
	log *eventLog

	// hold (set by the hub's commit while the feed is batching) makes
	// dispatch defer waking the watchers it tells of new entries to the
	// end of the batch (flush), so that a client is woken once for several
	// events. waking lists them, heldEvents counts the events dispatched
	// since the last flush, and held reports (for a check without mu)
	// whether a wake-up is deferred.
	hold       bool
	waking     []*Entry
	heldEvents int
	held       atomic.Bool // written under Hub.mu, read without it by Hub.Batch (the feed's goroutine)
}

func newRegistry(cfg Config) *registry {
	r := &registry{all: watcherSet{}, progress: watcherSet{}, byKey: map[string]watcherSet{}, byPrefix: map[string]watcherSet{},
		byIndex: map[string]map[string]watcherSet{}, byShard: map[string]map[string]*shardRanges{},
		metrics: cfg.Metrics, log: newLog(cfg.LogSize)}
	for i := range r.BookmarkSlots {
		r.BookmarkSlots[i] = watcherSet{}
	}
	r.indexes = append(r.indexes, dispatchIndex{name: watchcache.FieldIndex(nameField), attr: nameField})
	for _, f := range cfg.IndexFields {
		if f != nameField && f != namespaceField {
			r.indexes = append(r.indexes, dispatchIndex{name: watchcache.FieldIndex(f), attr: f})
		}
	}
	for _, l := range cfg.IndexLabels {
		r.indexes = append(r.indexes, dispatchIndex{name: watchcache.LabelIndex(l), label: true, attr: l})
	}
	r.indexes = append(r.indexes, dispatchIndex{name: watchcache.FieldIndex(namespaceField), attr: namespaceField})
	return r
}

// slotFor picks the most selective place to index w.
func (r *registry) slotFor(w *Entry) slot {
	if !w.Recursive {
		return slot{kind: slotKey, value: w.Key}
	}
	for _, d := range r.indexes {
		var v string
		var ok bool
		if d.label {
			if w.Pred.Label != nil {
				v, ok = w.Pred.Label.RequiresExactMatch(d.attr)
			}
		} else if w.Pred.Field != nil {
			v, ok = w.Pred.Field.RequiresExactMatch(d.attr)
		}
		if ok {
			return slot{kind: slotIndex, index: d.name, value: v}
		}
	}
	if field, ok := shardKey(w); ok {
		return slot{kind: slotShard, index: field, value: w.Prefix}
	}
	return slot{kind: slotPrefix, value: w.Prefix}
}

func (r *registry) add(w *Entry) {
	// The watcher has handled every event the log holds: it reads from the
	// next one on.
	w.log, w.cursor = r.log, r.log.head.Load()
	w.from.Store(0)
	w.stop.Store(0)
	w.behind.Store(0)
	select {
	case <-w.lagged: // of an earlier stint in live dispatch
	default:
	}
	w.slot = r.slotFor(w)
	r.all[w] = struct{}{}
	if w.ProgressNotify && w.Bookmarks {
		r.progress[w] = struct{}{}
	}
	if w.Bookmarks {
		r.BookmarkSlots[w.BookmarkSlot][w] = struct{}{}
	}
	if w.slot.kind == slotShard {
		byField := r.byShard[w.slot.value]
		if byField == nil {
			byField = map[string]*shardRanges{}
			r.byShard[w.slot.value] = byField
		}
		sr := byField[w.slot.index]
		if sr == nil {
			sr = &shardRanges{members: watcherSet{}}
			byField[w.slot.index] = sr
		}
		sr.add(w)
		return
	}
	set := r.setFor(w.slot, true)
	set[w] = struct{}{}
}

// has reports whether w is in live dispatch.
func (r *registry) has(w *Entry) bool {
	_, ok := r.all[w]
	return ok
}

func (r *registry) remove(w *Entry) {
	if _, ok := r.all[w]; !ok {
		return
	}
	if w.deadlineTimer != nil {
		w.deadlineTimer.Stop()
		w.deadlineTimer = nil
	}
	w.stop.Store(r.log.head.Load())
	delete(r.all, w)
	delete(r.progress, w)
	delete(r.BookmarkSlots[w.BookmarkSlot], w)
	if w.slot.kind == slotShard {
		byField := r.byShard[w.slot.value]
		if sr := byField[w.slot.index]; sr != nil {
			sr.remove(w)
			if len(sr.members) == 0 {
				delete(byField, w.slot.index)
			}
		}
		if len(byField) == 0 {
			delete(r.byShard, w.slot.value)
		}
		return
	}
	set := r.setFor(w.slot, false)
	delete(set, w)
	if len(set) == 0 {
		switch w.slot.kind {
		case slotKey:
			delete(r.byKey, w.slot.value)
		case slotPrefix:
			delete(r.byPrefix, w.slot.value)
		case slotIndex:
			delete(r.byIndex[w.slot.index], w.slot.value)
		}
	}
}

func (r *registry) setFor(s slot, create bool) watcherSet {
	var m map[string]watcherSet
	switch s.kind {
	case slotKey:
		m = r.byKey
	case slotPrefix:
		m = r.byPrefix
	default:
		m = r.byIndex[s.index]
		if m == nil {
			if !create {
				return nil
			}
			m = map[string]watcherSet{}
			r.byIndex[s.index] = m
		}
	}
	set := m[s.value]
	if set == nil && create {
		set = watcherSet{}
		m[s.value] = set
	}
	return set
}

// dispatch publishes ev to the log and tells every live watcher it
// concerns, and returns how many it told. A watcher more than its max
// changes behind leaves live dispatch instead.
func (r *registry) dispatch(ev *watchcache.Event) int {
	if len(r.all) == 0 {
		return 0
	}
	p := &Published{Event: ev}
	seq := r.log.publish(p)
	r.seq++
	if r.hold {
		r.heldEvents++
	}
	n := 0
	visitOne := func(w *Entry) {
		if w.seq == r.seq {
			return
		}
		w.seq = r.seq
		r.visited++
		if w.Interested(ev) && r.notify(w, p, seq, true, ev.RV-1) {
			n++
		}
	}
	visit := func(set watcherSet) {
		for w := range set {
			visitOne(w)
		}
	}
	key := ev.Key()
	visit(r.byKey[key])
	for i := 0; i < len(key); i++ {
		if key[i] == '/' {
			visit(r.byPrefix[key[:i+1]])
			for field, sr := range r.byShard[key[:i+1]] {
				if h, ok := shardHash(ev.Cur, field); ok {
					sr.stab(h, visitOne)
				}
			}
		}
	}
	for _, d := range r.indexes {
		m := r.byIndex[d.name]
		if len(m) == 0 {
			continue
		}
		if v, ok := d.valueOf(ev.Cur); ok {
			visit(m[v])
		}
		if ev.Prev != nil && ev.Prev != ev.Cur {
			if v, ok := d.valueOf(ev.Prev); ok {
				visit(m[v])
			}
		}
	}
	return n
}

// notify tells w that log entry p (number seq) concerns it. While the
// hub delivers for w and w has taken everything before p, p goes straight
// to its client (the common case: a client that keeps up, woken by the
// feed's goroutine itself). Otherwise the first entry w has not taken
// wakes it (now, or at the end of the feed's batch or of the coalescing
// interval, see Hub.Commit) and later ones find it
// awake; a change (counted) beyond w's max takes it out of live dispatch
// instead, at lagFrom, with the entries before seq left for it (false).
func (r *registry) notify(w *Entry, p *Published, seq uint64, counted bool, lagFrom uint64) bool {
	direct := w.Direct()
	if direct && !r.hold && w.from.Load() == 0 {
		if w.member.DeliverDirect(p) {
			w.cursor = seq + 1
			return true
		}
		// Its client's channel is full: a goroutine takes over from p.
		w.cursor = seq
		w.behind.Store(0)
		if counted {
			w.behind.Store(1)
		}
		w.from.Store(seq)
		w.kick()
		return true
	}
	// Only what waits for the goroutine counts: the hub delivers the rest
	// at the end of the batch, or hands it over, counted (Untake).
	if counted && !direct && w.behind.Add(1) > w.max {
		r.lag(w, lagFrom, seq)
		return false
	}
	if w.from.Load() != 0 || !w.from.CompareAndSwap(0, seq) {
		return true // awake already: it takes seq with the rest
	}
	if r.hold {
		if !w.waking {
			w.waking = true
			r.waking = append(r.waking, w)
			r.held.Store(true)
		}
		return true
	}
	r.wake(w)
	return true
}

// wake has what the log holds for w taken: by the hub while its client
// keeps up (see handoff.go), else by a goroutine, started if w has none.
func (r *registry) wake(w *Entry) {
	if w.Direct() {
		if w.member.DrainDirect() {
			w.behind.Store(0) // nothing waits for a goroutine
			return
		}
		if r.overflow(w) {
			return
		}
	}
	w.kick()
}

// overflow takes w out of live dispatch, at the first change beyond its
// max, if the hub handed more than max to its goroutine (the end of a
// batch its client had no room for); false if it did not.
func (r *registry) overflow(w *Entry) bool {
	if w.behind.Load() <= w.max {
		return false
	}
	var n int64
	for seq, head := w.cursor, r.log.head.Load(); seq < head; seq++ {
		p := r.log.at(seq)
		if p == nil {
			return false // its goroutine finds the loss
		}
		if p.to == toInterested && p.concerns(w) {
			if n++; n > w.max {
				r.lag(w, p.Event.RV-1, seq)
				return true
			}
		}
	}
	return false
}

// flush wakes the watchers whose wake-up the feed's batch deferred.
func (r *registry) flush() {
	for _, w := range r.waking {
		w.waking = false
		r.wake(w)
	}
	clear(r.waking)
	r.waking = r.waking[:0]
	r.heldEvents = 0
	r.held.Store(false)
}

// lag takes w out of live dispatch: every event up to from that concerns
// it is in the log before entry stop, and it catches up from there.
func (r *registry) lag(w *Entry, from, stop uint64) {
	r.remove(w)
	w.stop.Store(stop)
	w.lagFrom = from
	select {
	case w.lagged <- struct{}{}:
	default:
	}
	w.kick()
	r.metrics.WatcherLagged()
}

// lagAll takes every live watcher out of live dispatch at from (the cache
// was replaced after from).
func (r *registry) lagAll(from uint64) {
	head := r.log.head.Load()
	for w := range r.all {
		r.lag(w, from, head)
	}
}

// publishBookmark publishes a bookmark at rv for the watchers of set (to
// tells which) and tells them.
func (r *registry) publishBookmark(rv uint64, to audience, slot int, one *Entry, set watcherSet) {
	p := &Published{Event: &watchcache.Event{Type: watch.Bookmark, RV: rv}, to: to, slot: slot, one: one}
	seq := r.log.publish(p)
	for w := range set {
		r.notify(w, p, seq, false, 0)
	}
}

// bookmark publishes a bookmark at rv for the live watchers of one step
// of the bookmark round (see bookmarkLoop).
func (r *registry) bookmark(step int, rv uint64) {
	if set := r.BookmarkSlots[step]; len(set) > 0 {
		r.publishBookmark(rv, toSlot, step, nil, set)
	}
}

// progressed publishes a bookmark at rv, a storage progress notification,
// for the live watchers that asked for them (ProgressNotify and bookmarks).
func (r *registry) progressed(rv uint64) {
	if len(r.progress) > 0 {
		r.publishBookmark(rv, toProgress, 0, nil, r.progress)
	}
}
