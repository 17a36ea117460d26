package reflector

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
)

type popped struct {
	key     string
	types   []DeltaType
	fsu     []bool
	rvs     []string
	initial bool
}

func popOne(t *testing.T, f *DeltaFIFO[*widget.Widget], apply func(Deltas[*widget.Widget]) error) popped {
	t.Helper()
	var p popped
	err := f.Pop(func(key string, d Deltas[*widget.Widget], initial bool) error {
		p.key, p.initial = key, initial
		for _, x := range d {
			p.types = append(p.types, x.Type)
			p.fsu = append(p.fsu, x.FinalStateUnknown)
			p.rvs = append(p.rvs, x.Object.ResourceVersion)
		}
		if apply != nil {
			return apply(d)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("pop: %v", err)
	}
	return p
}

// applyTo applies popped deltas to a store, as the informer does.
func applyTo(s Store[*widget.Widget]) func(Deltas[*widget.Widget]) error {
	return func(d Deltas[*widget.Widget]) error {
		for _, x := range d {
			var err error
			if x.Type == Deleted {
				err = s.Delete(x.Object)
			} else {
				err = s.Update(x.Object)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

func TestDeltaFIFOCoalescesPerKeyInFirstSeenOrder(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{})
	must(t, f.Add(testWidget("ns", "a", "1", nil)))
	must(t, f.Add(testWidget("ns", "b", "2", nil)))
	must(t, f.Update(testWidget("ns", "a", "3", nil)))
	if f.Len() != 2 {
		t.Fatalf("Len = %d, want 2 keys", f.Len())
	}
	p := popOne(t, f, nil)
	if p.key != "ns/a" || !slices.Equal(p.types, []DeltaType{Added, Updated}) || !slices.Equal(p.rvs, []string{"1", "3"}) {
		t.Fatalf("first pop = %+v", p)
	}
	if p := popOne(t, f, nil); p.key != "ns/b" {
		t.Fatalf("second pop = %+v", p)
	}
}

func TestDeltaFIFODedupsConsecutiveDeletes(t *testing.T) {
	known := NewStore[*widget.Widget](nil)
	must(t, known.Add(testWidget("ns", "a", "1", nil)))
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	must(t, f.Delete(testWidget("ns", "a", "2", nil)))
	must(t, f.Delete(testWidget("ns", "a", "3", nil)))
	// A relist that no longer has "a" must not add a third deletion either.
	must(t, f.Replace(nil, "4"))
	p := popOne(t, f, nil)
	if !slices.Equal(p.types, []DeltaType{Deleted}) || p.fsu[0] || p.rvs[0] != "2" {
		t.Fatalf("deltas = %+v, want one known-state Deleted", p)
	}
	// A tombstone followed by a real deletion keeps the real one.
	f2 := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	must(t, f2.Replace(nil, "5"))
	must(t, f2.Delete(testWidget("ns", "a", "6", nil)))
	p = popOne(t, f2, nil)
	if !slices.Equal(p.types, []DeltaType{Deleted}) || p.fsu[0] || p.rvs[0] != "6" {
		t.Fatalf("tombstone+delete = %+v, want the real deletion", p)
	}
	// Deleting an unknown, unqueued key is dropped.
	f3 := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	must(t, f3.Delete(testWidget("ns", "zzz", "7", nil)))
	if f3.Len() != 0 {
		t.Fatal("delete of an unknown key was queued")
	}
}

func TestDeltaFIFOReplaceEmitsTombstones(t *testing.T) {
	known := NewStore[*widget.Widget](nil)
	must(t, known.Add(testWidget("ns", "known-gone", "1", nil)))
	must(t, known.Add(testWidget("ns", "kept", "1", nil)))
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	must(t, f.Add(testWidget("ns", "queued-gone", "2", nil))) // queued only, never in the store
	must(t, f.Replace([]*widget.Widget{testWidget("ns", "kept", "3", nil)}, "3"))

	got := map[string]popped{}
	for f.Len() > 0 {
		p := popOne(t, f, nil)
		got[p.key] = p
	}
	if p := got["ns/kept"]; !slices.Equal(p.types, []DeltaType{Replaced}) {
		t.Fatalf("kept = %+v", p)
	}
	if p := got["ns/known-gone"]; !slices.Equal(p.types, []DeltaType{Deleted}) || !p.fsu[0] || p.rvs[0] != "1" {
		t.Fatalf("known-gone = %+v, want a tombstone with the known state", p)
	}
	if p := got["ns/queued-gone"]; !slices.Equal(p.types, []DeltaType{Added, Deleted}) || !p.fsu[1] || p.rvs[1] != "2" {
		t.Fatalf("queued-gone = %+v, want Added then a tombstone", p)
	}
}

func TestDeltaFIFOHasSyncedAfterInitialPopulationProcessed(t *testing.T) {
	known := NewStore[*widget.Widget](nil)
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	if f.HasSynced() {
		t.Fatal("synced before any Replace")
	}
	must(t, f.Replace([]*widget.Widget{testWidget("ns", "a", "1", nil), testWidget("ns", "b", "1", nil)}, "1"))
	must(t, f.Add(testWidget("ns", "c", "2", nil))) // not part of the initial population
	if f.HasSynced() {
		t.Fatal("synced before anything was popped")
	}
	popOne(t, f, applyTo(known))
	// During processing of the last initial item HasSynced must still be false.
	var duringLast bool
	err := f.Pop(func(key string, d Deltas[*widget.Widget], initial bool) error {
		if !initial {
			t.Errorf("%s not flagged as initial", key)
		}
		duringLast = f.synced != nil && isClosed(f.Synced())
		return nil
	})
	must(t, err)
	if duringLast {
		t.Fatal("synced while the last initial item was still being processed")
	}
	if !f.HasSynced() {
		t.Fatal("not synced after the initial population was processed")
	}
	select {
	case <-f.Synced():
	default:
		t.Fatal("Synced channel not closed")
	}
	if p := popOne(t, f, nil); p.initial {
		t.Fatalf("post-initial item flagged initial: %+v", p)
	}
}

func TestDeltaFIFOEmptyInitialListSyncsAtOnce(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{})
	must(t, f.Replace(nil, "1"))
	if !f.HasSynced() {
		t.Fatal("empty initial list not synced")
	}
}

func TestDeltaFIFOResyncDoesNotOvertakePendingDelta(t *testing.T) {
	known := NewStore[*widget.Widget](nil)
	must(t, known.Add(testWidget("ns", "a", "1", nil)))
	must(t, known.Add(testWidget("ns", "b", "1", nil)))
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{KnownObjects: known})
	must(t, f.Update(testWidget("ns", "a", "5", nil))) // newer than the store
	must(t, f.Resync())
	got := map[string]popped{}
	for f.Len() > 0 {
		p := popOne(t, f, nil)
		got[p.key] = p
	}
	if p := got["ns/a"]; !slices.Equal(p.types, []DeltaType{Updated}) || p.rvs[0] != "5" {
		t.Fatalf("a = %+v: resync overtook (or followed) the pending update", p)
	}
	if p := got["ns/b"]; !slices.Equal(p.types, []DeltaType{Sync}) || p.rvs[0] != "1" {
		t.Fatalf("b = %+v, want one Sync", p)
	}
}

func TestDeltaFIFOTransformAndClose(t *testing.T) {
	f := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{Transform: func(w *widget.Widget) (*widget.Widget, error) {
		if w.Name == "bad" {
			return nil, errors.New("refused")
		}
		w.ManagedFields = nil
		w.Annotations = map[string]string{"transformed": "yes"}
		return w, nil
	}})
	must(t, f.Add(testWidget("ns", "a", "1", nil)))
	if err := f.Add(testWidget("ns", "bad", "1", nil)); err == nil {
		t.Fatal("transform error swallowed")
	}
	must(t, f.Pop(func(_ string, d Deltas[*widget.Widget], _ bool) error {
		if d[0].Object.Annotations["transformed"] != "yes" {
			t.Errorf("object not transformed")
		}
		return nil
	}))
	done := make(chan error)
	go func() { done <- f.Pop(func(string, Deltas[*widget.Widget], bool) error { return nil }) }()
	f.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFIFOClosed) {
			t.Fatalf("Pop after Close = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Pop did not return after Close")
	}
	if err := f.Add(testWidget("ns", "late", "1", nil)); !errors.Is(err, ErrFIFOClosed) {
		t.Fatalf("Add after Close = %v", err)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
