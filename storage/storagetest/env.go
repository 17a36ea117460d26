package storagetest

import (
	"context"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/storage"
)

// Env is what a case needs to exercise one implementation: the store under
// test plus raw access to the etcd behind it.
type Env struct {
	// Store is the implementation under test. It stores widget.Widgets
	// (encoded with widget.Codec) or, when Unstructured is set, unstructured
	// Widgets (widget.UnstructuredCodec). It must be empty when the case starts.
	Store storage.Interface
	// ResourcePrefix is the store's resource prefix without a trailing slash,
	// such as "/widgets". Objects live at ResourcePrefix + "/" + ns + "/" + name.
	ResourcePrefix string
	// Client is a raw client of the etcd behind the store, used to read the
	// current revision and raw keys, and to write keys outside the store.
	Client *clientv3.Client
	// EtcdPrefix is the store's path prefix in etcd: the raw etcd key of
	// storage key k is EtcdPrefix + k. It must be unique to the case.
	EtcdPrefix string
	// Compact compacts etcd's history up to rev and returns once the store
	// under test can observe the compaction (for a cache: once it knows).
	Compact func(ctx context.Context, rev int64) error
	// Unstructured reports that Store was built with NewFunc returning
	// *unstructured.Unstructured and NewListFunc *unstructured.UnstructuredList.
	Unstructured bool
}

// Case is one named conformance case.
type Case struct {
	// Name is the subtest name, unique in Cases.
	Name string
	// Run exercises env and fails t when the contract is broken.
	Run func(t *testing.T, env *Env)
}

// Cases lists every conformance case. Implementations normally call RunAll;
// RunCases lets them run a chosen subset.
func Cases() []Case {
	var all []Case
	for _, group := range [][]Case{
		createCases, getCases, listCases, pagingCases, updateCases, deleteCases, rawCases,
		miscCases, badInputCases, watchCases, watchInitialCases, watchMoreCases, watchCorruptCases, shardCases,
	} {
		all = append(all, group...)
	}
	return all
}

// RunAll runs every case of Cases as a subtest of t, each on a fresh Env
// from newEnv.
func RunAll(t *testing.T, newEnv func(t *testing.T) *Env) {
	for _, c := range Cases() {
		runCase(t, c, newEnv)
	}
}

// RunCases runs the cases whose names are listed (in Cases order) as
// subtests of t. An unknown name fails t, so a renamed case cannot silently
// drop out of an implementation's run.
func RunCases(t *testing.T, newEnv func(t *testing.T) *Env, names ...string) {
	all := Cases()
	for _, n := range names {
		if !slices.ContainsFunc(all, func(c Case) bool { return c.Name == n }) {
			t.Errorf("storagetest: no case named %q", n)
		}
	}
	for _, c := range all {
		if slices.Contains(names, c.Name) {
			runCase(t, c, newEnv)
		}
	}
}

func runCase(t *testing.T, c Case, newEnv func(t *testing.T) *Env) {
	t.Run(c.Name, func(t *testing.T) {
		env := newEnv(t)
		if env == nil || env.Store == nil || env.Client == nil {
			t.Fatal("storagetest: newEnv returned no store or no etcd client")
		}
		if n := env.rawKeys(t); n != 0 {
			t.Fatalf("storagetest: the store's etcd prefix %q already holds %d keys; each case needs an empty one", env.EtcdPrefix, n)
		}
		c.Run(t, env)
	})
}
