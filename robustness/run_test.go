package robustness

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// runConfig is one run's shape.
type runConfig struct {
	Seed     uint64
	Duration time.Duration
	Replicas int
	Clients  int
	Watchers int
	Keys     int
	// Faults are the kinds injected, cycling in a seeded order, with about
	// FaultPause between two faults.
	Faults     []faultKind
	FaultPause time.Duration
	// WrapStore wraps the store replica 0's cacher is fed from; Plant wraps
	// what clients of replica 0 see. Both are for planted bugs.
	WrapStore, Plant func(storage.Interface) storage.Interface
	// FinalWatchWait bounds the final watches' wait (0: finalWatchWait).
	FinalWatchWait time.Duration
}

// run is one run of the suite: its replicas, traffic, faults and record.
type run struct {
	cfg      runConfig
	prefix   string // the etcd prefix of the run's objects
	startRev uint64 // the prefix is empty at this revision; reads and watches ask for no older one
	keys     keyspace
	rec      *recorder
	histLink *link
	hist     *storagetest.History
	replicas []*replica

	// logf reports the progress of the checks (nil: silent).
	logf func(format string, args ...any)

	compactRev atomic.Uint64 // the last compaction's revision
	log        logBuffer     // the replicas' logs

	mu          sync.Mutex
	watches     []*watchRec
	watchStarts []*op
	faults      []faultRecord
}

// progress reports a step of the checks.
func (r *run) progress(format string, args ...any) {
	if r.logf != nil {
		r.logf("checks: "+format, args...)
	}
}

func (r *run) addWatch(w *watchRec) {
	r.mu.Lock()
	r.watches = append(r.watches, w)
	r.mu.Unlock()
}

func (r *run) watchStarted(o *op) {
	r.mu.Lock()
	r.watchStarts = append(r.watchStarts, o)
	r.mu.Unlock()
}

// pickReplica returns a running replica: the client's own mostly, another
// sometimes (clients move between replicas behind a load balancer).
func (r *run) pickReplica(rng *rand.Rand, client int) (int, storage.Interface) {
	n := len(r.replicas)
	first := client % n
	if rng.IntN(4) == 0 {
		first = rng.IntN(n)
	}
	for i := range n {
		id := (first + i) % n
		if s := r.replicas[id].get(); s != nil {
			return id, s
		}
	}
	return -1, nil
}

// guaranteeEnv is the view of the run the storagetest history needs.
func (r *run) guaranteeEnv(cli *clientv3.Client) storagetest.GuaranteeEnv {
	return storagetest.GuaranteeEnv{Client: cli, EtcdPrefix: r.prefix, ResourcePrefix: widget.KeyRoot,
		Codec: widget.Codec, NewFunc: widget.New, GetAttrs: widget.GetAttrs}
}

// execute sets the run up on the shared cluster, drives traffic and faults
// for the configured duration, stops everything, and returns the run and
// the result of its checks.
func execute(t *testing.T, cfg runConfig) (*run, *result) {
	t.Helper()
	r := &run{cfg: cfg, keys: newKeyspace(cfg.Keys), rec: &recorder{}, logf: t.Logf}
	r.prefix = fmt.Sprintf("/robustness/%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), cfg.Seed)
	setup, cancelSetup := context.WithTimeout(context.Background(), time.Minute)
	defer cancelSetup()
	if _, err := cluster.WaitLeader(setup); err != nil {
		t.Fatal(err)
	}
	etcdPrefix := r.prefix + widget.KeyRoot + "/"
	resp, err := cluster.Client.Delete(setup, etcdPrefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	startRev := resp.Header.Revision
	r.startRev = uint64(startRev)
	r.rec.maxRV.Store(uint64(startRev))

	// The history: etcd's own, over a link of its own (members die under it too).
	if r.histLink, err = newLink(setup); err != nil {
		t.Fatal(err)
	}
	defer r.histLink.close()
	histCtx, stopHist := context.WithCancel(context.Background())
	r.hist = storagetest.RecordHistory(histCtx, r.guaranteeEnv(r.histLink.client), startRev+1)
	defer func() { stopHist(); <-r.hist.Done() }()

	// The stores' and cachers' logs go to the run's log, written out with
	// the history when the run fails.
	logger := slog.New(slog.NewTextHandler(&r.log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for i := range cfg.Replicas {
		var wrap, plant func(storage.Interface) storage.Interface
		if i == 0 {
			wrap, plant = cfg.WrapStore, cfg.Plant
		}
		rep, err := newReplica(setup, i, r.prefix, logger, wrap, plant)
		if err != nil {
			t.Fatal(err)
		}
		defer rep.close()
		if err := rep.start(); err != nil {
			t.Fatal(err)
		}
		r.replicas = append(r.replicas, rep)
	}

	// The traffic runs for the duration, and on until every fault kind
	// was injected once and the last fault is repaired.
	r.rec.start = time.Now()
	trafficCtx, stopTraffic := context.WithCancel(context.Background())
	defer stopTraffic()
	faultCtx, stopFaults := context.WithTimeout(trafficCtx, cfg.Duration)
	defer stopFaults()
	var traffic sync.WaitGroup
	r.startClients(trafficCtx, &traffic, cfg.Clients)
	r.startWatchers(trafficCtx, &traffic, cfg.Watchers)
	cycled := make(chan struct{})
	go r.injectFaults(faultCtx, cycled)
	<-faultCtx.Done()
	<-cycled
	stopTraffic()
	traffic.Wait()
	took := r.rec.since()

	// Every member runs again (the next run shares them); the history
	// catches up with etcd's newest revision.
	end, cancelEnd := context.WithTimeout(context.Background(), time.Minute)
	defer cancelEnd()
	if _, err := cluster.WaitLeader(end); err != nil {
		t.Fatal(err)
	}
	cur, err := cluster.Client.Get(end, "/", clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.hist.WaitFor(end, uint64(cur.Header.Revision)); err != nil {
		t.Fatalf("history: %v", err)
	}
	final := uint64(cur.Header.Revision)
	r.finalWatches(end, final)
	res := r.check(took, final)
	// A minute of its own: the checks of a long run take longer than the
	// minute above (66 s after a 30-minute soak, whose final lists all
	// failed on that minute's deadline instead of reading).
	lists, cancelLists := context.WithTimeout(context.Background(), time.Minute)
	defer cancelLists()
	r.checkFinalState(lists, res)
	return r, res
}

// checkFinalState: after the run, a consistent list from every replica
// holds exactly etcd's state (no acknowledged write lost in a cache).
func (r *run) checkFinalState(ctx context.Context, res *result) {
	for _, rep := range r.replicas {
		s := rep.get()
		if s == nil {
			continue
		}
		l := &widget.WidgetList{}
		var err error
		for try := 0; try < 50; try++ { // a replica restarted last may still be listing
			if err = s.GetList(ctx, widget.KeyRoot, storage.ListOptions{Recursive: true, Predicate: storage.Everything}, l); err == nil {
				break
			}
			sleepCtx(ctx, 200*time.Millisecond)
		}
		o := &op{ID: -1, Replica: rep.id, Kind: opList, Mode: rvConsistent}
		if err != nil {
			res.add(checkLost, o, fmt.Sprintf("final consistent list of %s: %v", rep, err))
			continue
		}
		o.RV, _ = strconv.ParseUint(l.ResourceVersion, 10, 64)
		for i := range l.Items {
			w := &l.Items[i]
			o.Items = append(o.Items, item{Key: w.Namespace + "/" + w.Name, Seq: w.Annotations[storagetest.SeqAnnotation], RV: rvOf(w)})
		}
		if o.RV < res.finalRV {
			res.add(checkLost, o, fmt.Sprintf("final consistent list of %s at RV %d, etcd was at %d", rep, o.RV, res.finalRV))
		}
		if d := res.truth.diff(o.RV, "", o.Items); d != "" {
			res.add(checkLost, o, fmt.Sprintf("final consistent list of %s differs from etcd at RV %d: %s", rep, o.RV, d))
		}
	}
}

// logBuffer is a log shared by goroutines, kept in memory.
type logBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	return len(p), nil
}

func (l *logBuffer) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.b)
}

func (l *logBuffer) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.b...)
}
