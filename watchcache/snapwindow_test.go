package watchcache

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/storage"
)

// modelObj is what the model knows of an object: its RV and app label.
type modelObj struct {
	rv  uint64
	app string
}

// windowModel drives a cache through random revisions of puts and deletes
// and records the state after each revision.
type windowModel struct {
	t      *testing.T
	c      *Cache
	rnd    *rand.Rand
	cur    map[string]modelObj
	states map[uint64]map[string]modelObj
	first  uint64 // the Replace RV
	last   uint64 // the newest complete revision
	keys   int
}

func newWindowModel(t *testing.T, seed uint64, keys int, mod func(*Config)) *windowModel {
	c, _ := newTestCache(t, func(c *Config) {
		c.SpacedSnapshots = true
		if mod != nil {
			mod(c)
		}
	})
	m := &windowModel{t: t, c: c, rnd: rand.New(rand.NewPCG(seed, 1)), cur: map[string]modelObj{},
		states: map[uint64]map[string]modelObj{}, first: 100, last: 100, keys: keys}
	if err := c.Replace(nil, m.first); err != nil {
		t.Fatal(err)
	}
	m.states[m.first] = map[string]modelObj{}
	return m
}

func modelName(i int) string { return fmt.Sprintf("w%03d", i) }

// revision applies one revision of 1-3 changes on distinct keys; between
// revisions the RV moves by 1 or 2 (other resources' writes).
func (m *windowModel) revision() {
	rv := m.last + 1 + uint64(m.rnd.IntN(2))
	n := 1 + m.rnd.IntN(3)
	used := map[string]bool{}
	for range n {
		name := modelName(m.rnd.IntN(m.keys))
		key := "/widgets/ns/" + name
		if used[key] {
			continue
		}
		used[key] = true
		if _, ok := m.cur[key]; ok && m.rnd.IntN(4) == 0 {
			mustApply(m.t, m.c, "del", testWidget("ns", name, rv, nil), rv)
			delete(m.cur, key)
			continue
		}
		app := []string{"x", "y"}[m.rnd.IntN(2)]
		mustApply(m.t, m.c, "mod", testWidget("ns", name, rv, map[string]string{"app": app}), rv)
		m.cur[key] = modelObj{rv: rv, app: app}
	}
	if m.rnd.IntN(2) == 0 {
		m.c.UpdateRV(rv) // otherwise the next revision completes this one
	}
	m.last = rv
	m.states[rv] = maps.Clone(m.cur)
	if s := m.c.Stats(); s.Snapshots > m.c.cfg.MaxSnapshots {
		m.t.Fatalf("%d snapshots, more than MaxSnapshots %d", s.Snapshots, m.c.cfg.MaxSnapshots)
	}
}

// stateOf is the model's state at rv: that of the newest revision <= rv.
func (m *windowModel) stateOf(rv uint64) map[string]modelObj {
	for r := rv; r >= m.first; r-- {
		if st, ok := m.states[r]; ok {
			return st
		}
	}
	m.t.Fatalf("no model state at %d", rv)
	return nil
}

// check lists rv exactly, all of it, by pages of 7 and through the app
// index, and compares each answer with the model. It returns the list's
// error when every answer failed alike.
func (m *windowModel) check(rv uint64) error {
	m.t.Helper()
	want := m.stateOf(rv)
	all := ListOptions{Key: "/widgets/", Recursive: true}
	res, err := m.c.List(rv, Exact, all)
	if err != nil {
		if !errors.Is(err, storage.ErrGone) {
			m.t.Fatalf("exact list at %d: %v, want a state or 410", rv, err)
		}
		return err
	}
	m.compare(rv, "whole", res.Items, want, func(modelObj) bool { return true })
	var paged []*Element
	opts := ListOptions{Key: "/widgets/", Recursive: true, Limit: 7}
	for {
		page, err := m.c.List(rv, Exact, opts)
		if err != nil {
			m.t.Fatalf("page at %d from %q: %v", rv, opts.StartKey, err)
		}
		paged = append(paged, page.Items...)
		if !page.More {
			break
		}
		opts.StartKey = page.NextKey
	}
	m.compare(rv, "paged", paged, want, func(modelObj) bool { return true })
	idx, err := m.c.List(rv, Exact, ListOptions{Key: "/widgets/", Recursive: true,
		Index: &IndexValue{Name: LabelIndex("app"), Value: "x"}})
	if err != nil {
		m.t.Fatalf("index list at %d: %v", rv, err)
	}
	m.compare(rv, "index app=x", idx.Items, want, func(o modelObj) bool { return o.app == "x" })
	return nil
}

func (m *windowModel) compare(rv uint64, what string, got []*Element, want map[string]modelObj, keep func(modelObj) bool) {
	m.t.Helper()
	var wantKeys []string
	for k, o := range want {
		if keep(o) {
			wantKeys = append(wantKeys, k)
		}
	}
	slices.Sort(wantKeys)
	if gk := keys(got); !slices.Equal(gk, wantKeys) {
		m.t.Fatalf("%s list at %d: keys %v, want %v", what, rv, gk, wantKeys)
	}
	for _, el := range got {
		if w := want[el.Key]; el.RV != w.rv || el.Labels["app"] != w.app {
			m.t.Fatalf("%s list at %d: %s at RV %d app %q, want RV %d app %q", what, rv, el.Key, el.RV,
				el.Labels["app"], w.rv, w.app)
		}
	}
}

// Every RV the ring covers lists exactly as the model says, with far more
// revisions than snapshots, lists at random RVs in between, and the
// number of snapshots bounded throughout.
func TestExactListsOverTheWholeRing(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			m := newWindowModel(t, seed, 40, func(c *Config) { c.MaxSnapshots = 16 })
			for range 400 {
				m.revision()
				if done, _ := m.c.RV(); m.rnd.IntN(5) == 0 {
					rv := m.first + m.rnd.Uint64N(done-m.first+1)
					if err := m.check(rv); err != nil {
						t.Fatalf("exact list at %d while the ring holds every event: %v", rv, err)
					}
				}
			}
			m.c.UpdateRV(m.last)
			for rv := m.first; rv <= m.last; rv++ {
				if err := m.check(rv); err != nil {
					t.Fatalf("exact list at %d while the ring holds every event: %v", rv, err)
				}
			}
			if s := m.c.Stats(); s.Snapshots > 16 {
				t.Fatalf("%d snapshots after the lists, want at most 16", s.Snapshots)
			}
		})
	}
}

// With a ring that evicts, an RV is served exactly or refused with a 410,
// never served wrong; every RV from the oldest snapshot the ring still
// holds the events after is served. After a compaction, RVs below it are
// refused and the others still served.
func TestExactListsRefuseWhatTheRingLost(t *testing.T) {
	m := newWindowModel(t, 7, 30, func(c *Config) { c.MaxSnapshots, c.MinCapacity, c.MaxCapacity = 8, 64, 64 })
	for range 300 {
		m.revision()
	}
	m.c.UpdateRV(m.last)
	oldest := m.c.Oldest()
	if oldest <= m.first {
		t.Fatalf("the ring evicted nothing (oldest %d)", oldest)
	}
	firstBase := uint64(0)
	for _, s := range m.c.snaps.list {
		if s.rv >= oldest {
			firstBase = s.rv
			break
		}
	}
	refused := 0
	for rv := m.first; rv <= m.last; rv++ {
		err := m.check(rv)
		if err != nil {
			refused++
			if rv >= firstBase {
				t.Errorf("exact list at %d refused (%v) though snapshot %d and the ring's events after it cover it", rv, err, firstBase)
			}
		}
	}
	if refused == 0 {
		t.Error("no RV before the ring was refused")
	}
	compactAt := m.last - 20
	m.c.Compact(compactAt)
	for rv := m.last - 30; rv <= m.last; rv++ {
		err := m.check(rv)
		if rv < compactAt && !errors.Is(err, storage.ErrGone) {
			t.Errorf("exact list at %d below the compaction %d: %v, want 410", rv, compactAt, err)
		}
		if rv >= compactAt && err != nil {
			t.Errorf("exact list at %d after the compaction %d: %v", rv, compactAt, err)
		}
	}
}

// A replace drops the snapshots and the ring: RVs before it are refused.
func TestExactListsAfterReplace(t *testing.T) {
	m := newWindowModel(t, 3, 20, func(c *Config) { c.MaxSnapshots = 4 })
	for range 50 {
		m.revision()
	}
	m.c.UpdateRV(m.last)
	mid := m.first + (m.last-m.first)/2
	if err := m.check(mid); err != nil {
		t.Fatalf("exact list at %d before the replace: %v", mid, err)
	}
	if err := m.c.Replace(nil, m.last+10); err != nil {
		t.Fatal(err)
	}
	if _, err := m.c.List(mid, Exact, ListOptions{Key: "/widgets/", Recursive: true}); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("exact list at %d after a replace at %d: %v, want 410", mid, m.last+10, err)
	}
}

// The state a replay builds is kept as a snapshot: the next pages of a
// list at that RV find it as is.
func TestReplayedStateIsKept(t *testing.T) {
	m := newWindowModel(t, 5, 20, func(c *Config) { c.MaxSnapshots = 4 })
	for range 50 {
		m.revision()
	}
	m.c.UpdateRV(m.last)
	rv := m.first
	for ; rv < m.last; rv++ {
		if _, ok := m.c.snaps.at(rv); !ok {
			break
		}
	}
	if rv == m.last {
		t.Fatal("snapshots hold every RV: nothing to rebuild")
	}
	if err := m.check(rv); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.c.snaps.at(rv); !ok {
		t.Fatalf("the state rebuilt at %d was not kept", rv)
	}
}

// Lists that rebuild past states run while revisions are applied: each
// answer is the state at its RV (run with -race).
func TestExactListsWhileApplying(t *testing.T) {
	m := newWindowModel(t, 11, 30, func(c *Config) { c.MaxSnapshots = 8 })
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rnd := rand.New(rand.NewPCG(uint64(r), 2))
			for {
				select {
				case <-done:
					return
				default:
				}
				cur, _ := m.c.RV()
				rv := m.first + rnd.Uint64N(cur-m.first+1)
				res, err := m.c.List(rv, Exact, ListOptions{Key: "/widgets/", Recursive: true})
				if err != nil {
					t.Errorf("exact list at %d: %v", rv, err)
					return
				}
				mu.Lock()
				want := m.stateOf(rv)
				mu.Unlock()
				if got := keys(res.Items); len(got) != len(want) {
					t.Errorf("exact list at %d: %d items, want %d", rv, len(got), len(want))
					return
				}
				for _, el := range res.Items {
					if w, ok := want[el.Key]; !ok || w.rv != el.RV {
						t.Errorf("exact list at %d: %s at %d, want %v", rv, el.Key, el.RV, w)
						return
					}
				}
			}
		}()
	}
	for range 300 {
		mu.Lock()
		m.revision()
		mu.Unlock()
	}
	close(done)
	wg.Wait()
}
