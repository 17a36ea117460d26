package cacher_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// failoverReplica is one replica that can be stopped and started again:
// its own etcd client (to one member), store and, while running, cacher.
type failoverReplica struct {
	store *etcd3.Store
	mu    sync.Mutex
	c     *cacher.Cacher // nil while stopped
	stop  func()
}

func (r *failoverReplica) start(t *testing.T) {
	c, err := cacher.New(cacher.Config{Storage: r.store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs})
	if err != nil {
		t.Error(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	r.mu.Lock()
	r.c, r.stop = c, func() { cancel(); <-done }
	r.mu.Unlock()
}

func (r *failoverReplica) kill() {
	r.mu.Lock()
	stop := r.stop
	r.c, r.stop = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (r *failoverReplica) cacher() *cacher.Cacher {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c
}

// seenEvent is one change as a watcher or etcd reports it.
type seenEvent struct {
	typ watch.EventType
	key string
	rv  uint64
}

// TestReplicaFailoverGuarantees: three replicas, each a cacher with its own
// etcd client on its own member of a three-member cluster; one replica at a
// time is stopped and started again while a writer changes objects; a
// client watches, and on every break reconnects to a replica picked at
// random, from the last RV it saw. Nothing is compacted, so the client must
// never need to relist (no 410), and what it receives must be exactly etcd's
// history of the resource: every change once, in order, with its type and
// RV (no gap, no duplicate, no reordering).
func TestReplicaFailoverGuarantees(t *testing.T) {
	cl := embedtest.StartCluster(t)
	prefix := embedtest.Prefix(t)
	var reps []*failoverReplica
	for i := range 3 {
		r := &failoverReplica{store: memberStore(t, cl, i, prefix)}
		r.start(t)
		t.Cleanup(r.kill)
		reps = append(reps, r)
	}
	ctx, cancelAll := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancelAll()
	writer := reps[0].store
	startRV := create(t, writer, "ns", "seed", nil)

	const ops = 200
	writesDone := make(chan struct{})
	go func() { // the writer: creates, updates and deletes over 20 keys
		defer close(writesDone)
		rng := rand.New(rand.NewPCG(7, 8))
		exists := map[string]bool{}
		for range ops {
			time.Sleep(10 * time.Millisecond) // spread the writes over the restarts
			name := fmt.Sprintf("k%02d", rng.IntN(20))
			var err error
			switch {
			case !exists[name]:
				err = writer.Create(ctx, key("ns", name), widget.NewWidget("ns", name), nil, 0)
				exists[name] = true
			case rng.IntN(4) == 0:
				err = writer.Delete(ctx, key("ns", name), &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{})
				exists[name] = false
			default:
				bump(t, writer, "ns", name)
			}
			if err != nil {
				t.Errorf("write: %v", err)
				return
			}
		}
	}()
	killerDone := make(chan struct{})
	go func() { // the killer: stops and restarts one replica at a time
		defer close(killerDone)
		for i := 0; ; i++ {
			select {
			case <-writesDone:
				return
			case <-time.After(150 * time.Millisecond):
			}
			r := reps[i%3]
			r.kill()
			time.Sleep(100 * time.Millisecond)
			r.start(t)
		}
	}()

	// The client.
	var got []seenEvent
	last, relists, reconnects := startRV, 0, 0
	rng := rand.New(rand.NewPCG(3, 4))
	var finalRV uint64
	for {
		select {
		case <-writesDone:
			if finalRV == 0 {
				resp, err := cl.Client.Get(ctx, "/", clientv3.WithCountOnly())
				if err != nil {
					t.Fatal(err)
				}
				finalRV = uint64(resp.Header.Revision)
			}
		default:
		}
		if finalRV != 0 && last >= finalRV {
			break
		}
		c := reps[rng.IntN(3)].cacher()
		if c == nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
		w, err := c.Watch(wctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(last), Predicate: storage.Everything})
		if errors.Is(err, storage.ErrGone) {
			t.Fatalf("410 for a watch from %d: nothing was compacted", last)
		}
		if err != nil {
			wcancel()
			time.Sleep(10 * time.Millisecond) // not ready or stopped: try another replica
			continue
		}
		reconnects++
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				if st, ok := ev.Object.(*metav1.Status); ok && st.Code == 410 {
					relists++
				}
				break
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			acc, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatal(err)
			}
			rv := rvOf(t, ev.Object)
			got = append(got, seenEvent{ev.Type, "/widgets/" + acc.GetNamespace() + "/" + acc.GetName(), rv})
			last = rv
			if finalRV != 0 && last >= finalRV {
				break
			}
		}
		w.Stop()
		wcancel()
	}
	<-killerDone
	if relists != 0 {
		t.Fatalf("%d relists (410) while nothing was compacted", relists)
	}

	// Ground truth: etcd's own history of the resource after startRV.
	var want []seenEvent
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for resp := range cl.Client.Watch(wctx, prefix+"widgets/", clientv3.WithPrefix(), clientv3.WithRev(int64(startRV)+1)) {
		for _, e := range resp.Events {
			typ := watch.Modified
			switch {
			case e.Type == clientv3.EventTypeDelete:
				typ = watch.Deleted
			case e.IsCreate():
				typ = watch.Added
			}
			want = append(want, seenEvent{typ, "/" + strings.TrimPrefix(string(e.Kv.Key), prefix), uint64(e.Kv.ModRevision)})
		}
		if len(want) > 0 && want[len(want)-1].rv >= finalRV {
			break
		}
	}
	t.Logf("%d events over %d connections, up to RV %d", len(got), reconnects, finalRV)
	if reconnects < 3 {
		t.Errorf("the client connected %d times; the test needs replicas to go away under it", reconnects)
	}
	if len(got) != len(want) {
		t.Fatalf("client got %d events, etcd's history has %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event %d: client %v, etcd %v", i, got[i], want[i])
		}
	}
}
