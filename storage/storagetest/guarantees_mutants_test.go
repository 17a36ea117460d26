package storagetest_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// RunWatchGuarantees tests itself end to end here: each mutant wraps the
// etcd3 store's watches and breaks one guarantee, and a small run of the
// checker in a child process (this binary, TestGuaranteeMutantChild) must
// fail with the checker that guards it.

const guaranteeMutantEnv = "STORAGETEST_GUARANTEE_MUTANT"

// guaranteeMutants maps a broken guarantee to the checker that must catch it;
// "none" is the control: the same small run on the intact store must pass.
var guaranteeMutants = map[string]string{
	"none":         "",
	"drop":         "checkReliable",     // the third event of every watch is lost
	"duplicate":    "checkUnique",       // the third event is delivered twice
	"reorder":      "checkOrdered",      // the third and fourth events are swapped
	"split":        "checkAtomic",       // a transaction's second event comes after the next revision
	"bookmark-lie": "checkBookmarkable", // a bookmark at the fourth event's RV precedes it
}

func TestGuaranteeMutants(t *testing.T) {
	if os.Getenv(guaranteeMutantEnv) != "" {
		t.Skip("inside a mutant child")
	}
	for name, checker := range guaranteeMutants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestGuaranteeMutantChild$", "-test.timeout=2m")
			cmd.Env = append(os.Environ(), guaranteeMutantEnv+"="+name)
			out, err := cmd.CombinedOutput()
			if checker == "" {
				if err != nil {
					t.Fatalf("the small guarantee run fails on the intact store: %v\n%s", err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("the guarantee checker passed a store that breaks %q:\n%s", name, out)
			}
			if !strings.Contains(string(out), checker+":") {
				t.Errorf("mutant %q was not caught by %s:\n%s", name, checker, out)
			}
		})
	}
}

// TestGuaranteeMutantChild runs a small guarantee check against the mutant
// named in the environment; it is skipped otherwise.
func TestGuaranteeMutantChild(t *testing.T) {
	name := os.Getenv(guaranteeMutantEnv)
	if name == "" {
		t.Skip("run by TestGuaranteeMutants")
	}
	prefix := embedtest.Prefix(t)
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	storagetest.RunWatchGuarantees(t, storagetest.GuaranteeEnv{
		Store: &mutantStore{Store: store, mutant: name}, Client: etcd.Client, EtcdPrefix: prefix,
		ResourcePrefix: "/widgets", Codec: widget.Codec, NewFunc: widget.New, GetAttrs: widget.GetAttrs,
	}, storagetest.GuaranteeOptions{Writes: 150, Watchers: 30, Resumes: 5, GoneProbes: 2, LenientCompactionErrors: true})
}

// mutantStore is the etcd3 store whose watches break one guarantee.
type mutantStore struct {
	*etcd3.Store
	mutant string
}

func (m *mutantStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := m.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	mw := &mutantWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go mw.run(m.mutant, m.Store.Versioner())
	return mw, nil
}

// mutantWatch forwards a watch's events through a mutation.
type mutantWatch struct {
	inner    watch.Interface
	out      chan watch.Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func (w *mutantWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *mutantWatch) Stop() {
	w.stopOnce.Do(func() { close(w.stop) })
	w.inner.Stop()
	<-w.done
}

func (w *mutantWatch) send(ev watch.Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.stop:
		return false
	}
}

func isData(ev watch.Event) bool {
	return ev.Type == watch.Added || ev.Type == watch.Modified || ev.Type == watch.Deleted
}

// run applies the mutation to the inner stream; the sender closes out.
func (w *mutantWatch) run(mutant string, v storage.Versioner) {
	defer close(w.done)
	defer close(w.out)
	rv := func(ev watch.Event) uint64 { r, _ := v.ObjectResourceVersion(ev.Object); return r }
	n := 0                 // data events seen
	var held []watch.Event // events held back by reorder and split
	var lastRV uint64      // RV of the previous data event
	splitDone := false
	for ev := range w.inner.ResultChan() {
		emit := []watch.Event{ev}
		if isData(ev) {
			n++
			switch {
			case mutant == "drop" && n == 3:
				emit = nil
			case mutant == "duplicate" && n == 3:
				emit = append(emit, ev)
			case mutant == "reorder" && n == 3:
				held, emit = emit, nil
			case mutant == "reorder" && n == 4:
				emit, held = append(emit, held...), nil
			case mutant == "split" && !splitDone && held == nil && rv(ev) == lastRV:
				held, emit = emit, nil
			case mutant == "split" && held != nil && rv(ev) != rv(held[0]):
				emit, held, splitDone = append(emit, held...), nil, true
			case mutant == "bookmark-lie" && n == 4:
				bm := widget.New()
				_ = v.UpdateObject(bm, rv(ev))
				emit = []watch.Event{{Type: watch.Bookmark, Object: bm}, ev}
			}
			lastRV = rv(ev)
		}
		for _, e := range emit {
			if !w.send(e) {
				return
			}
		}
	}
	for _, e := range held {
		if !w.send(e) {
			return
		}
	}
}
