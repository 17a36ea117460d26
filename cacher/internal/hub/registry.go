package hub

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
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

	// hold (set by the hub's commit while the feed is batching) makes
	// dispatch hold each delivery in the watcher's held list instead of
	// offering it; flush offers them, each watcher's in order, so that
	// its client is woken once for all of them. holding lists the
	// watchers with held events, heldEvents counts the events dispatched
	// since the last flush, and held reports (for a check without mu)
	// whether anything is held.
	hold       bool
	holding    []*Entry
	heldEvents int
	held       atomic.Bool // written under Hub.mu, read without it by Hub.Batch (the feed's goroutine)
	// wrappers are the round's shared wrappers of encoded watchers'
	// objects (see Wrappers).
	wrappers Wrappers
}

func newRegistry(cfg Config) *registry {
	r := &registry{all: watcherSet{}, progress: watcherSet{}, byKey: map[string]watcherSet{}, byPrefix: map[string]watcherSet{},
		byIndex: map[string]map[string]watcherSet{}, byShard: map[string]map[string]*shardRanges{},
		metrics: cfg.Metrics}
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
	w.setDirect(w.input.empty())
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
	w.setDirect(false)
	if _, ok := r.all[w]; !ok {
		return
	}
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

// dispatch queues ev to every live watcher it concerns and returns how
// many got it. A watcher whose queue is full leaves live dispatch.
func (r *registry) dispatch(ev *watchcache.Event) int {
	if len(r.all) == 0 {
		return 0
	}
	r.seq++
	if r.hold {
		r.heldEvents++
		r.held.Store(true)
	}
	defer r.wrappers.reset()
	n := 0
	visitOne := func(w *Entry) {
		if w.seq == r.seq {
			return
		}
		w.seq = r.seq
		r.visited++
		if !w.Interested(ev) {
			return
		}
		if r.hold {
			if len(w.held) == 0 {
				r.holding = append(r.holding, w)
			}
			w.held = append(w.held, ev)
			n++
			return
		}
		if w.offer(ev, &r.wrappers) {
			n++
		} else {
			r.lag(w, ev.RV-1)
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

// flush offers the held deliveries (see hold), each watcher's in the order
// dispatched; a watcher whose queue fills leaves live dispatch at the
// event that did not fit, and the rest of its held events are dropped (it
// catches up on them from the cache).
func (r *registry) flush() {
	if len(r.holding) == 0 {
		r.heldEvents = 0
		return
	}
	for _, w := range r.holding {
		for _, ev := range w.held {
			if !w.offer(ev, &r.wrappers) {
				r.lag(w, ev.RV-1)
				break
			}
		}
		clear(w.held)
		w.held = w.held[:0]
	}
	clear(r.holding)
	r.holding = r.holding[:0]
	r.heldEvents = 0
	r.held.Store(false)
	r.wrappers.reset()
}

// lag takes w out of live dispatch: it has every event up to from queued
// (or filtered out) and catches up from there.
func (r *registry) lag(w *Entry, from uint64) {
	r.remove(w)
	w.lagFrom = from
	select {
	case w.lagged <- struct{}{}:
	default:
	}
	w.wake()
	r.metrics.WatcherLagged()
}

// lagAll takes every live watcher out of live dispatch at from (the cache
// was replaced after from).
func (r *registry) lagAll(from uint64) {
	for w := range r.all {
		r.lag(w, from)
	}
}

// bookmark queues a bookmark at rv to the live watchers of one step of
// the bookmark round (see bookmarkLoop), skipping those whose queue is full.
func (r *registry) bookmark(step int, rv uint64) {
	set := r.BookmarkSlots[step]
	if len(set) == 0 {
		return
	}
	ev := &watchcache.Event{Type: watch.Bookmark, RV: rv}
	for w := range set {
		w.offer(ev, &r.wrappers)
	}
}

// progressed queues a bookmark at rv, a storage progress notification, to
// the live watchers that asked for them (ProgressNotify and bookmarks).
func (r *registry) progressed(rv uint64) {
	if len(r.progress) == 0 {
		return
	}
	ev := &watchcache.Event{Type: watch.Bookmark, RV: rv}
	for w := range r.progress {
		w.offer(ev, &r.wrappers)
	}
}

// Wrappers are the wrappers of the current objects of the changes a
// dispatch round delivers (one event, or a flush's held events): one per
// change, shared by every encoded watcher the round delivers it to, so
// that a change costs one wrapper, not one per watcher. Owned by the
// registry (Hub.mu held); reset at the end of each round.
type Wrappers struct {
	evs  []*watchcache.Event
	objs []*storage.EncodedObject
}

// Get returns the wrapper of ev's current object obj, made on first use.
func (s *Wrappers) Get(ev *watchcache.Event, obj runtime.Object) *storage.EncodedObject {
	for i, e := range s.evs {
		if e == ev {
			return s.objs[i]
		}
	}
	o := &storage.EncodedObject{Object: obj, Encodings: ev.Encodings()}
	s.evs = append(s.evs, ev)
	s.objs = append(s.objs, o)
	return o
}

// reset forgets the round's wrappers.
func (s *Wrappers) reset() {
	clear(s.evs)
	clear(s.objs)
	s.evs, s.objs = s.evs[:0], s.objs[:0]
}
