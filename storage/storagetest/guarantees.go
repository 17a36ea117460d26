package storagetest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// Flags of RunWatchGuarantees, registered on the default flag set so that any
// test binary importing this package accepts them:
//
//	go test ./cacher -run Guarantees -guarantee.seed=42
//	go test ./storage/storagetest -run Guarantees -guarantee.long
var (
	guaranteeSeedFlag = flag.Uint64("guarantee.seed", 0,
		"seed of RunWatchGuarantees (0: derived from the clock; printed on failure)")
	guaranteeLongFlag = flag.Bool("guarantee.long", false,
		"run RunWatchGuarantees as a longer soak (more writes, watchers and resumes)")
)

// GuaranteeEnv is the store under test and the raw etcd access the guarantee
// checker needs to write multi-key transactions and to record etcd's own
// history as the ground truth.
type GuaranteeEnv struct {
	// Store is the implementation under test (the etcd3 store, the cacher, ...).
	Store storage.Interface
	// Client is a raw client of the etcd Store writes to, used for multi-key
	// transactions, for recording the ground truth and for the compaction.
	Client *clientv3.Client
	// EtcdPrefix is what Store prepends to a storage key to form the etcd
	// key (path.Join(EtcdPrefix, key), as Kubernetes' etcd3 store does).
	EtcdPrefix string
	// ResourcePrefix is the storage key the checker writes under and watches
	// recursively, such as "/widgets". It must be empty (and stay untouched by
	// others) when the run starts.
	ResourcePrefix string
	// Codec encodes and decodes the stored values exactly as Store does.
	// Values are assumed to be stored untransformed (identity transformer).
	Codec runtime.Codec
	// NewFunc returns an empty object of the stored type.
	NewFunc func() runtime.Object
	// NewObject returns a new object named namespace/name, ready to encode
	// (for unstructured objects: with apiVersion and kind). nil means
	// NewFunc with namespace and name set.
	NewObject func(namespace, name string) runtime.Object
	// GetAttrs extracts labels and fields for selectors; nil means
	// storage.DefaultAttrs. It is used for the watchers' predicates and for
	// evaluating them on the ground truth.
	GetAttrs storage.AttrFunc
	// Compact compacts etcd up to rev; nil means a physical compaction
	// through Client. A cacher test may wrap it to wait until the cacher has
	// observed the compaction.
	Compact func(ctx context.Context, rev int64) error
}

// GuaranteeOptions tune a RunWatchGuarantees run. Zero values take the
// defaults documented on each field; -guarantee.long raises them.
type GuaranteeOptions struct {
	// Seed seeds every random choice; 0 means the -guarantee.seed flag, or
	// the clock when the flag is unset. The seed is logged, and printed again
	// on failure.
	Seed uint64
	// Writes is the number of write attempts; 0 means 500 (4000 long).
	Writes int
	// Writers is the number of concurrent writers; 0 means 4 (8 long).
	Writers int
	// Watchers is the number of watchers started during the run; 0 means 200 (800 long).
	Watchers int
	// Resumes is the number of watchers re-watched from an RV they saw;
	// 0 means a quarter of Watchers.
	Resumes int
	// GoneProbes is the number of watches started after the compaction at a
	// compacted RV; 0 means 5.
	GoneProbes int
	// Keys is the number of distinct objects written; 0 means 30.
	Keys int
	// NoCompaction skips the compaction (for stores that cannot observe one).
	NoCompaction bool
	// AllowServingCompacted accepts, for a watch started at a compacted RV,
	// a complete correct stream instead of a 410 error (a cache that still
	// holds the history may serve it).
	AllowServingCompacted bool
	// NoProgressRequests stops the run from calling Store.RequestWatchProgress
	// while it writes; watchers then get only the bookmarks the store makes
	// on its own. Use it only for a store known to break the bookmark promise
	// on requested progress notifications, and say so.
	NoProgressRequests bool
	// LenientCompactionErrors accepts, from a watcher whose next revision
	// etcd compacted away, an error event of any code (not only 410), even
	// one that cuts the events of a revision in part. Use it only for a store
	// known to report compaction that way (as Kubernetes' etcd3 store does
	// when etcd sends an event without its previous value), and say so.
	LenientCompactionErrors bool
	// Timeout bounds the wait for every watcher to receive all its events
	// once the writes are done; 0 means 60 s (3 min long).
	Timeout time.Duration
	// Long selects the soak defaults; the -guarantee.long flag also sets it.
	Long bool
}

func (o GuaranteeOptions) withDefaults() GuaranteeOptions {
	if *guaranteeLongFlag {
		o.Long = true
	}
	if o.Seed == 0 {
		o.Seed = *guaranteeSeedFlag
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	def := func(v *int, short, long int) {
		if *v == 0 {
			*v = short
			if o.Long {
				*v = long
			}
		}
	}
	def(&o.Writes, 500, 4000)
	def(&o.Writers, 4, 8)
	def(&o.Watchers, 200, 800)
	def(&o.Resumes, max(1, o.Watchers/4), max(1, o.Watchers/4))
	def(&o.GoneProbes, 5, 20)
	def(&o.Keys, 30, 60)
	if o.Timeout == 0 {
		o.Timeout = time.Minute
		if o.Long {
			o.Timeout = 3 * time.Minute
		}
	}
	return o
}

func (e GuaranteeEnv) validate() error {
	switch {
	case e.Store == nil:
		return fmt.Errorf("GuaranteeEnv.Store is nil")
	case e.Client == nil:
		return fmt.Errorf("GuaranteeEnv.Client is nil")
	case e.Codec == nil:
		return fmt.Errorf("GuaranteeEnv.Codec is nil")
	case e.NewFunc == nil:
		return fmt.Errorf("GuaranteeEnv.NewFunc is nil")
	case e.ResourcePrefix == "" || e.ResourcePrefix == "/":
		return fmt.Errorf("GuaranteeEnv.ResourcePrefix must name a resource, got %q", e.ResourcePrefix)
	}
	return nil
}

func (e GuaranteeEnv) attrs() storage.AttrFunc {
	if e.GetAttrs != nil {
		return e.GetAttrs
	}
	return storage.DefaultAttrs
}

func (e GuaranteeEnv) newObject(ns, name string) (runtime.Object, error) {
	var obj runtime.Object
	if e.NewObject != nil {
		obj = e.NewObject(ns, name)
	} else {
		obj = e.NewFunc()
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	acc.SetNamespace(ns)
	acc.SetName(name)
	return obj, nil
}

// storageKey is the storage key of namespace/name.
func (e GuaranteeEnv) storageKey(ns, name string) string {
	return strings.TrimSuffix(e.ResourcePrefix, "/") + "/" + ns + "/" + name
}

// etcdKey is the etcd key of a storage key.
func (e GuaranteeEnv) etcdKey(key string) string {
	return path.Join("/", e.EtcdPrefix, key)
}

// etcdPrefix is the etcd prefix of every key under ResourcePrefix.
func (e GuaranteeEnv) etcdResourcePrefix() string {
	return path.Join("/", e.EtcdPrefix, e.ResourcePrefix) + "/"
}

func (e GuaranteeEnv) compact(ctx context.Context, rev int64) error {
	if e.Compact != nil {
		return e.Compact(ctx, rev)
	}
	_, err := e.Client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return err
}

// RunWatchGuarantees checks the six watch guarantees of docs/design.md against
// env.Store with a randomized run: concurrent writers (Create,
// GuaranteedUpdate, Delete through the store and multi-key transactions on the
// raw client), hundreds of watchers started at random RVs seen during the run
// (with and without label and field selectors, some with bookmarks and
// progress notify), one etcd compaction half way, watches started at a
// compacted RV afterwards, and re-watches from RVs the watchers saw. Every
// stream is checked against etcd's own history, recorded by a raw watch
// started before the first write, with the checkers checkOrdered,
// checkUnique, checkAtomic, checkBookmarkable, checkReliable, checkTermination
// and checkResumable.
//
// A 410 may come as an error event carrying a *metav1.Status with code 410
// (the contract's way) or as a Watch error matching storage.ErrGone; both
// count as "the watch ended with 410".
//
// The run compacts etcd's whole keyspace: do not run it in parallel with
// tests that need old revisions. It is bounded (well under a minute with the
// defaults) and reproducible in its choices from the seed, which it logs.
func RunWatchGuarantees(t *testing.T, env GuaranteeEnv, opts GuaranteeOptions) {
	t.Helper()
	if err := env.validate(); err != nil {
		t.Fatal(err)
	}
	opts = opts.withDefaults()
	t.Logf("watch guarantees: seed %d (rerun with -guarantee.seed=%d), %d writes by %d writers, %d watchers",
		opts.Seed, opts.Seed, opts.Writes, opts.Writers, opts.Watchers)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("watch guarantees FAILED with seed %d: rerun with -guarantee.seed=%d", opts.Seed, opts.Seed)
		}
	})
	r := newGuaranteeRun(t, env, opts)
	r.run()
}

// newRand returns a generator derived from the run's seed and a stream id, so
// that each goroutine's choices are reproducible.
func newRand(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}
