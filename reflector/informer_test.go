package reflector

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
	"k8s.io/apimachinery/pkg/watch"
)

// startInformer runs inf until the test ends and checks Run returns.
func startInformer(t *testing.T, inf *SharedIndexInformer[*widget.Widget]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- inf.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Run did not return")
		}
	})
}

func newTestInformer(t *testing.T, lw ListerWatcher, opts ...InformerOption) *SharedIndexInformer[*widget.Widget] {
	t.Helper()
	inf, err := newSharedIndexInformer[*widget.Widget](lw, append([]InformerOption{WithBackoff(fastBackoff)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return inf
}

func TestInformerStoreBeforeHandlersAndHasSynced(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	var storeHadIt []bool
	var regSyncedDuringInitial bool
	var reg ResourceEventHandlerRegistration
	gate := make(chan struct{})
	reg, err := inf.AddEventHandler(ResourceEventHandlerFuncs[*widget.Widget]{
		AddFunc: func(w *widget.Widget, initial bool) {
			<-gate
			_, ok := inf.GetStore().GetByKey(w.Namespace + "/" + w.Name)
			storeHadIt = append(storeHadIt, ok && initial)
			regSyncedDuringInitial = regSyncedDuringInitial || reg.HasSynced()
		},
	})
	must(t, err)
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "1", nil), testWidget("ns", "b", "2", nil)), nil)
	lw.expectWatch(t, nil)
	eventually(t, "informer synced", inf.HasSynced)
	if reg.HasSynced() {
		t.Fatal("handler synced before it handled its initial adds")
	}
	close(gate)
	eventually(t, "handler synced", reg.HasSynced)
	if !slices.Equal(storeHadIt, []bool{true, true}) {
		t.Fatalf("store/initial flags seen by handler: %v", storeHadIt)
	}
	if regSyncedDuringInitial {
		t.Fatal("registration reported synced while initial adds were in flight")
	}
	if inf.LastSyncResourceVersion() != "10" {
		t.Fatalf("LastSyncResourceVersion %q", inf.LastSyncResourceVersion())
	}
	if err := inf.SetTransform(nil); !errors.Is(err, ErrInformerStarted) {
		t.Fatalf("SetTransform after start = %v", err)
	}
}

func TestInformerLateHandlerGetsReplayWithoutGapOrDuplicate(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "1", nil), testWidget("ns", "b", "2", nil)), nil)
	w, _ := lw.expectWatch(t, nil)
	eventually(t, "synced", inf.HasSynced)

	// Feed events while handlers are being added: each late handler must
	// see every object exactly once, as replay or as a live event.
	stop := make(chan struct{})
	fed := make(chan int)
	go func() {
		n := 0
		defer func() { fed <- n }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case w.ch <- watch.Event{Type: watch.Added, Object: testWidget("ns", "live"+itoa(i), itoa(100+i), nil)}:
				n++
			}
		}
	}()
	var handlers []*countingHandler
	var regs []ResourceEventHandlerRegistration
	for i := 0; i < 5; i++ {
		h := &countingHandler{}
		reg, err := inf.AddEventHandler(h)
		must(t, err)
		handlers, regs = append(handlers, h), append(regs, reg)
		time.Sleep(time.Millisecond) // spread registrations over the event stream
	}
	close(stop)
	total := 2 + <-fed
	eventually(t, "store has all", func() bool { return len(inf.GetStore().List()) == total })
	for i, h := range handlers {
		eventually(t, "handler has all", func() bool { return int(h.adds.Load()) >= total })
		if int(h.adds.Load()) != total {
			t.Fatalf("handler %d got %d adds for %d objects", i, h.adds.Load(), total)
		}
		seen := map[string]int{}
		for _, e := range h.events() {
			k, _, _ := strings.Cut(e, " initial=")
			seen[k]++
		}
		for k, n := range seen {
			if n != 1 {
				t.Fatalf("handler %d saw %q %d times", i, k, n)
			}
		}
		if !regs[i].HasSynced() {
			t.Fatalf("handler %d not synced", i)
		}
	}
}

func itoa(i int) string {
	return string(rune('0'+i/1000%10)) + string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
}

func TestInformerRemoveHandlerStopsDeliveries(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	kept, removed := &countingHandler{}, &countingHandler{}
	_, err := inf.AddEventHandler(kept)
	must(t, err)
	reg, err := inf.AddEventHandler(removed)
	must(t, err)
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", ""), nil)
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Added, testWidget("ns", "a", "11", nil))
	eventually(t, "both got a", func() bool { return kept.adds.Load() == 1 && removed.adds.Load() == 1 })
	must(t, inf.RemoveEventHandler(reg))
	if err := inf.RemoveEventHandler(reg); !errors.Is(err, ErrUnknownRegistration) {
		t.Fatalf("second removal = %v", err)
	}
	w.send(t, watch.Added, testWidget("ns", "b", "12", nil))
	w.send(t, watch.Modified, testWidget("ns", "a", "13", nil))
	eventually(t, "kept got the rest", func() bool { return kept.adds.Load() == 2 && kept.updates.Load() == 1 })
	if removed.adds.Load() != 1 || removed.updates.Load() != 0 {
		t.Fatalf("removed handler still got events: %v", removed.events())
	}
}

func TestInformerRelistDeliversTombstones(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	h := &countingHandler{}
	_, err := inf.AddEventHandler(h)
	must(t, err)
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "1", nil), testWidget("ns", "b", "2", nil)), nil)
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Error, goneStatus())
	lw.expectList(t, widgetList("20", "", testWidget("ns", "a", "1", nil), testWidget("ns", "c", "15", nil)), nil)
	lw.expectWatch(t, nil)
	eventually(t, "relist handled", func() bool { return h.delete.Load() == 1 && h.adds.Load() == 3 })
	ev := h.events()
	if !slices.Contains(ev, "delete ns/b@2 unknown=true") || !slices.Contains(ev, "add ns/c@15 initial=false") {
		t.Fatalf("events %v", ev)
	}
	if slices.Contains(ev, "update ns/a@1->1") {
		t.Fatalf("unchanged object delivered as update to a handler without resync: %v", ev)
	}
	if keys := sorted(inf.GetStore().ListKeys()); !slices.Equal(keys, []string{"ns/a", "ns/c"}) {
		t.Fatalf("store keys %v", keys)
	}
}

func TestInformerPanickingHandlerDoesNotStopInformer(t *testing.T) {
	lw := newScriptedLW()
	panics := make(chan any, 10)
	inf := newTestInformer(t, lw, WithHandlerPanicHandler(func(r any) { panics <- r }))
	h := &countingHandler{}
	_, err := inf.AddEventHandler(ResourceEventHandlerFuncs[*widget.Widget]{AddFunc: func(w *widget.Widget, _ bool) {
		if w.Name == "boom" {
			panic("bad handler")
		}
	}})
	must(t, err)
	_, err = inf.AddEventHandler(h)
	must(t, err)
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", ""), nil)
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Added, testWidget("ns", "boom", "11", nil))
	w.send(t, watch.Added, testWidget("ns", "ok", "12", nil))
	eventually(t, "other handler got both", func() bool { return h.adds.Load() == 2 })
	select {
	case r := <-panics:
		if r != "bad handler" {
			t.Fatalf("reported %v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("panic not reported")
	}
	if _, ok := inf.GetStore().GetByKey("ns/ok"); !ok {
		t.Fatal("informer stopped storing after a handler panic")
	}
}

func TestInformerResyncPerHandlerAndTransform(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	must(t, inf.SetTransform(func(w *widget.Widget) (*widget.Widget, error) {
		w.Spec.Data = "" // drop payload
		return w, nil
	}))
	resyncing, quiet := &countingHandler{}, &countingHandler{}
	_, err := inf.AddEventHandlerWithResyncPeriod(resyncing, 20*time.Millisecond)
	must(t, err)
	_, err = inf.AddEventHandler(quiet)
	must(t, err)
	startInformer(t, inf)
	big := testWidget("ns", "a", "1", nil)
	big.Spec.Data = "payload"
	lw.expectList(t, widgetList("10", "", big), nil)
	lw.expectWatch(t, nil)
	eventually(t, "resyncs", func() bool { return resyncing.updates.Load() >= 2 })
	if quiet.updates.Load() != 0 {
		t.Fatalf("handler without resync got %d updates", quiet.updates.Load())
	}
	if got, _ := inf.GetStore().GetByKey("ns/a"); got.Spec.Data != "" {
		t.Fatal("transform not applied")
	}
}

func TestInformerRejectsAfterStop(t *testing.T) {
	inf := newTestInformer(t, newScriptedLW())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	must(t, inf.Run(ctx))
	if err := inf.Run(ctx); !errors.Is(err, ErrInformerStarted) {
		t.Fatalf("second Run = %v", err)
	}
	if _, err := inf.AddEventHandler(&countingHandler{}); !errors.Is(err, ErrInformerStopped) {
		t.Fatalf("AddEventHandler after stop = %v", err)
	}
	if _, err := newSharedIndexInformer[*widget.Widget](nil); err == nil {
		t.Fatal("nil ListerWatcher accepted")
	}
}

// TestInformerStoreResourceVersion: the store RV follows the list, the
// events and the bookmarks, but only once the change is in the store: an
// event received (LastSyncResourceVersion) but not yet applied leaves it
// where it was.
func TestInformerStoreResourceVersion(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	if rv := inf.StoreResourceVersion(); rv != "" {
		t.Fatalf("StoreResourceVersion before Run = %q", rv)
	}
	startInformer(t, inf)
	lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "1", nil)), nil)
	w, _ := lw.expectWatch(t, nil)
	eventually(t, "store at the list's RV", func() bool { return inf.StoreResourceVersion() == "10" })

	inf.blockDeltas.Lock() // the informer cannot apply the next change
	w.send(t, watch.Added, testWidget("ns", "b", "11", nil))
	eventually(t, "event received", func() bool { return inf.LastSyncResourceVersion() == "11" })
	if rv := inf.StoreResourceVersion(); rv != "10" {
		inf.blockDeltas.Unlock()
		t.Fatalf("StoreResourceVersion = %q while the event at 11 is not stored", rv)
	}
	inf.blockDeltas.Unlock()
	eventually(t, "store at the event's RV", func() bool { return inf.StoreResourceVersion() == "11" })
	if _, ok := inf.GetStore().GetByKey("ns/b"); !ok {
		t.Fatal("StoreResourceVersion reached 11 before the object of 11 was stored")
	}

	w.send(t, watch.Bookmark, bookmark("15", false))
	eventually(t, "store at the bookmark's RV", func() bool { return inf.StoreResourceVersion() == "15" })
}

// TestInformerRelist: Relist ends the watch, lists with a consistent read
// (RV unset) and watches from that list's RV; the store follows the list.
func TestInformerRelist(t *testing.T) {
	lw := newScriptedLW()
	inf := newTestInformer(t, lw)
	startInformer(t, inf)
	if opts := lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "1", nil)), nil); opts.ResourceVersion != "0" {
		t.Fatalf("first list at RV %q", opts.ResourceVersion)
	}
	w, _ := lw.expectWatch(t, nil)
	eventually(t, "synced", inf.HasSynced)

	inf.Relist()
	w.waitStopped(t)
	if opts := lw.expectList(t, widgetList("30", "", testWidget("ns", "b", "25", nil)), nil); opts.ResourceVersion != "" {
		t.Fatalf("relist at RV %q, want a consistent read", opts.ResourceVersion)
	}
	if _, opts := lw.expectWatch(t, nil); opts.ResourceVersion != "30" {
		t.Fatalf("watch after the relist from RV %q", opts.ResourceVersion)
	}
	eventually(t, "store at the relist's RV", func() bool { return inf.StoreResourceVersion() == "30" })
	if _, ok := inf.GetStore().GetByKey("ns/a"); ok {
		t.Fatal("an object missing from the relist is still stored")
	}
	if _, ok := inf.GetStore().GetByKey("ns/b"); !ok {
		t.Fatal("the relisted object is not stored")
	}
}
