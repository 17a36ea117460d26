package reflector

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// runEtcdInformer starts an informer over reader through a countingLW.
func runEtcdInformer(t *testing.T, reader storage.Interface, opts ...InformerOption) (*SharedIndexInformer[*widget.Widget], *countingLW) {
	t.Helper()
	lw := &countingLW{inner: NewStorageListerWatcher(reader, widgetsPrefix, widget.NewList, "", WithAttrFunc(widget.GetAttrs))}
	inf := newTestInformer(t, lw, opts...)
	return inf, lw
}

func TestEtcdInformerConvergesUnderConcurrentWrites(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			writer, reader := backend(t)
			for i := 0; i < 20; i++ {
				create(t, writer, "ns", fmt.Sprintf("pre-%02d", i))
			}
			inf, lw := runEtcdInformer(t, reader)
			mirror := newMirror()
			_, err := inf.AddEventHandler(mirror)
			must(t, err)
			startInformer(t, inf)
			// Writers start while the initial list is under way.
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Go(func() {
					rnd := rand.New(rand.NewPCG(uint64(g), 7))
					for i := 0; i < 60; i++ {
						name := fmt.Sprintf("w%d-%02d", g, rnd.IntN(15))
						switch rnd.IntN(3) {
						case 0:
							out := &widget.Widget{}
							_ = writer.Create(testCtx(t), wkey("ns", name), widget.NewWidget("ns", name), out, 0)
						case 1:
							_ = bump(t, writer, "ns", name)
						case 2:
							_ = remove(t, writer, "ns", name)
						}
					}
				})
			}
			wg.Wait()
			waitConverged(t, writer, map[string]func() map[string]string{
				"store":   func() map[string]string { return storeState(inf.GetStore()) },
				"handler": mirror.snapshot,
			})
			if n := lw.lists.Load(); n != 1 {
				t.Fatalf("%d lists, want 1", n)
			}
		})
	}
}

func TestEtcdInformerResumesAfterWatchBreakWithoutRelist(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			writer, reader := backend(t)
			inf, lw := runEtcdInformer(t, reader)
			mirror := newMirror()
			_, err := inf.AddEventHandler(mirror)
			must(t, err)
			startInformer(t, inf)
			eventually(t, "synced", inf.HasSynced)
			for round := 0; round < 3; round++ {
				for i := 0; i < 5; i++ {
					create(t, writer, "ns", fmt.Sprintf("r%d-%d", round, i))
				}
				must(t, bump(t, writer, "ns", fmt.Sprintf("r%d-0", round)))
				waitConverged(t, writer, map[string]func() map[string]string{"handler": mirror.snapshot})
				lw.breakWatches(t)
				// Writes while no watch is open must arrive through the resumed watch.
				must(t, remove(t, writer, "ns", fmt.Sprintf("r%d-1", round)))
			}
			waitConverged(t, writer, map[string]func() map[string]string{
				"store": func() map[string]string { return storeState(inf.GetStore()) }, "handler": mirror.snapshot,
			})
			if n := lw.lists.Load(); n != 1 {
				t.Fatalf("%d lists after watch breaks, want 1 (resume without relist)", n)
			}
			if n := lw.watches.Load(); n < 4 {
				t.Fatalf("%d watches, want ≥ 4 (one per break)", n)
			}
			if len(mirror.tombstone) != 0 {
				t.Fatalf("tombstones without a relist: %v", mirror.tombstone)
			}
		})
	}
}

func TestEtcdInformerRelistsOnceAfterCompaction(t *testing.T) {
	writer := newEtcdStore(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		create(t, writer, "ns", n)
	}
	inf, lw := runEtcdInformer(t, writer)
	mirror := newMirror()
	_, err := inf.AddEventHandler(mirror)
	must(t, err)
	startInformer(t, inf)
	eventually(t, "synced", inf.HasSynced)
	waitConverged(t, writer, map[string]func() map[string]string{"handler": mirror.snapshot})

	waitOpen(t, lw)
	waitHeld, release := lw.holdWatches()
	lw.breakWatches(t)
	waitHeld(t)
	// While the informer cannot watch: deletions, an update, a creation,
	// then a compaction past the informer's RV.
	must(t, remove(t, writer, "ns", "b"))
	must(t, remove(t, writer, "ns", "c"))
	must(t, bump(t, writer, "ns", "d"))
	last := create(t, writer, "ns", "e")
	rev, err := writer.Versioner().ObjectResourceVersion(last)
	must(t, err)
	must(t, etcdServer.Compact(testCtx(t), int64(rev)))
	release()

	waitConverged(t, writer, map[string]func() map[string]string{
		"store": func() map[string]string { return storeState(inf.GetStore()) }, "handler": mirror.snapshot,
	})
	if n := lw.lists.Load(); n != 2 {
		t.Fatalf("%d lists, want 2 (initial + one relist after 410)", n)
	}
	mirror.mu.Lock()
	defer mirror.mu.Unlock()
	for _, k := range []string{"ns/b", "ns/c"} {
		if mirror.tombstone[k] != 1 {
			t.Fatalf("deletion of %s delivered as %d tombstones, want 1 (all: %v)", k, mirror.tombstone[k], mirror.tombstone)
		}
	}
}

func TestEtcdInformerWatchListMode(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			writer, reader := backend(t)
			for i := 0; i < 30; i++ {
				create(t, writer, "ns", fmt.Sprintf("o%02d", i))
			}
			// A consistent list through the reader first: the cacher's
			// consistent watch-list start then needs no waiting.
			if got := etcdState(t, reader); len(got) != 30 {
				t.Fatalf("reader lists %d objects", len(got))
			}
			inf, lw := runEtcdInformer(t, reader, WithWatchList(true),
				WithWatchErrorHandler(func(err error) { t.Logf("watch error: %v", err) }))
			mirror := newMirror()
			_, err := inf.AddEventHandler(mirror)
			must(t, err)
			startInformer(t, inf)
			eventually(t, "synced", inf.HasSynced)
			must(t, bump(t, writer, "ns", "o03"))
			must(t, remove(t, writer, "ns", "o04"))
			waitConverged(t, writer, map[string]func() map[string]string{
				"store": func() map[string]string { return storeState(inf.GetStore()) }, "handler": mirror.snapshot,
			})
			if n := lw.lists.Load(); n != 0 {
				t.Fatalf("%d lists in watch-list mode, want 0", n)
			}
			if n := lw.watches.Load(); n != 1 {
				t.Fatalf("%d watches, want 1 (the initial stream stays open)", n)
			}
		})
	}
}

func TestEtcdLateHandlerGetsEveryObjectOnce(t *testing.T) {
	writer, reader := backends(t)["cacher"](t)
	for i := 0; i < 50; i++ {
		create(t, writer, "ns", fmt.Sprintf("pre-%02d", i))
	}
	inf, _ := runEtcdInformer(t, reader)
	startInformer(t, inf)
	eventually(t, "synced", inf.HasSynced)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			create(t, writer, "ns", fmt.Sprintf("live-%03d", i))
		}
	})
	time.Sleep(20 * time.Millisecond) // let some live creations flow first
	late := newMirror()
	reg, err := inf.AddEventHandler(late)
	must(t, err)
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	waitConverged(t, writer, map[string]func() map[string]string{"late handler": late.snapshot})
	eventually(t, "late handler synced", reg.HasSynced)
	late.mu.Lock()
	defer late.mu.Unlock()
	for k, n := range late.adds {
		if n != 1 {
			t.Fatalf("%s added %d times", k, n)
		}
	}
}

func TestEtcdBlockedHandlerDoesNotDelayAnother(t *testing.T) {
	writer, reader := backends(t)["cacher"](t)
	inf, _ := runEtcdInformer(t, reader)
	gate := make(chan struct{})
	blocked, err := inf.AddEventHandler(ResourceEventHandlerFuncs[*widget.Widget]{AddFunc: func(*widget.Widget, bool) { <-gate }})
	must(t, err)
	fast := newMirror()
	_, err = inf.AddEventHandler(fast)
	must(t, err)
	startInformer(t, inf)
	t.Cleanup(func() { close(gate) }) // runs before the informer stops
	for i := 0; i < 40; i++ {
		create(t, writer, "ns", fmt.Sprintf("o%02d", i))
	}
	waitConverged(t, writer, map[string]func() map[string]string{"fast handler": fast.snapshot})
	if p := blocked.(*HandlerRegistration[*widget.Widget]).Pending(); p != 40 {
		t.Fatalf("blocked handler pending = %d, want 40", p)
	}
}

func TestEtcdRemovedHandlerStopsReceiving(t *testing.T) {
	writer, reader := backends(t)["cacher"](t)
	inf, _ := runEtcdInformer(t, reader)
	kept, gone := newMirror(), newMirror()
	_, err := inf.AddEventHandler(kept)
	must(t, err)
	reg, err := inf.AddEventHandler(gone)
	must(t, err)
	startInformer(t, inf)
	create(t, writer, "ns", "before")
	waitConverged(t, writer, map[string]func() map[string]string{"kept": kept.snapshot, "gone": gone.snapshot})
	must(t, inf.RemoveEventHandler(reg))
	create(t, writer, "ns", "after")
	must(t, bump(t, writer, "ns", "before"))
	waitConverged(t, writer, map[string]func() map[string]string{"kept": kept.snapshot})
	if got := gone.snapshot(); len(got) != 1 || got["ns/before"] == "" || got["ns/before"] == kept.snapshot()["ns/before"] {
		t.Fatalf("removed handler state %v: it received events after removal", got)
	}
}

func TestStorageListerWatcherRejectsBadSelectors(t *testing.T) {
	s := newEtcdStore(t)
	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "ns")
	ctx := context.Background()
	for _, opts := range []struct{ label, field string }{{"a in (", ""}, {"", "metadata.name"}} {
		o := listOpts(opts.label, opts.field)
		if _, err := lw.List(ctx, o); !isBadRequest(err) {
			t.Errorf("List(%+v) = %v, want 400", opts, err)
		}
		if _, err := lw.Watch(ctx, o); !isBadRequest(err) {
			t.Errorf("Watch(%+v) = %v, want 400", opts, err)
		}
	}
}

// TestStorageListerWatcherValidatesAsKubernetes: the in-process
// ListerWatcher applies Kubernetes' ListOptions validation (through
// storage.ListOptionsFrom, as the server does): 422 Invalid.
func TestStorageListerWatcherValidatesAsKubernetes(t *testing.T) {
	s := newEtcdStore(t)
	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "ns")
	yes := true
	if _, err := lw.List(testCtx(t), metav1.ListOptions{SendInitialEvents: &yes}); !apierrors.IsInvalid(err) {
		t.Errorf("List with sendInitialEvents = %v, want 422", err)
	}
	if _, err := lw.Watch(testCtx(t), metav1.ListOptions{SendInitialEvents: &yes,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}); !apierrors.IsInvalid(err) {
		t.Errorf("watch-list without bookmarks = %v, want 422", err)
	}
}

func TestStorageListerWatcherTranslatesOptions(t *testing.T) {
	s := newEtcdStore(t)
	for i := 0; i < 5; i++ {
		create(t, s, "ns", fmt.Sprintf("o%d", i))
		create(t, s, "other", fmt.Sprintf("o%d", i))
	}
	w := widget.NewWidget("ns", "labelled").WithLabels(map[string]string{"tier": "gold"})
	must(t, s.Create(testCtx(t), wkey("ns", "labelled"), w, &widget.Widget{}, 0))
	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "ns")
	ctx := testCtx(t)

	o := listOpts("", "")
	o.Limit = 2
	page, err := lw.List(ctx, o)
	must(t, err)
	l := page.(*widget.WidgetList)
	if len(l.Items) != 2 || l.Continue == "" {
		t.Fatalf("page: %d items, continue %q", len(l.Items), l.Continue)
	}
	sel, err := lw.List(ctx, listOpts("tier=gold", ""))
	must(t, err)
	if items := sel.(*widget.WidgetList).Items; len(items) != 1 || items[0].Name != "labelled" {
		t.Fatalf("label selector: %v", items)
	}
	byName, err := lw.List(ctx, listOpts("", "metadata.name=o3"))
	must(t, err)
	if items := byName.(*widget.WidgetList).Items; len(items) != 1 || items[0].Namespace != "ns" {
		t.Fatalf("field selector in namespace: %v", items)
	}
	// A watch with timeoutSeconds ends normally (closed channel, no error).
	wo := listOpts("", "")
	wo.ResourceVersion = l.ResourceVersion
	one := int64(1)
	wo.TimeoutSeconds = &one
	start := time.Now()
	wt, err := lw.Watch(ctx, wo)
	must(t, err)
	defer wt.Stop()
	for ev := range wt.ResultChan() {
		t.Fatalf("unexpected event %v", ev.Type)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 10*time.Second {
		t.Fatalf("watch with a 1s timeout ended after %v", d)
	}
}

// waitOpen waits until lw has an open watch.
func waitOpen(t *testing.T, lw *countingLW) {
	eventually(t, "an open watch", func() bool {
		lw.mu.Lock()
		defer lw.mu.Unlock()
		return len(lw.open) > 0
	})
}
