package storagetest_test

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// The suite tests itself here: each mutant wraps the etcd3 store and removes
// one feature, and the cases that check that feature must then fail. Every
// mutant runs in a child process (this test binary, TestMutant) so that its
// expected failures do not fail this package.

const mutantEnv = "STORAGETEST_MUTANT"

// mutants maps a removed feature to the cases that must detect it.
var mutants = map[string][]string{
	"create-ignores-ttl":        {"CreateWithTTL"},
	"get-ignores-rv":            {"GetResourceVersionTooLarge", "GetResourceVersionBeyondAnyRevision"},
	"list-ignores-exact":        {"ListExactOlder", "ListExactCompacted", "ListPagingAtExactResourceVersion"},
	"list-ignores-limit":        {"ListPagination", "ListFilterWithLimitFillsPages", "ListRemainingItemCountNotSetWithFilter"},
	"list-ignores-selectors":    {"ListLabelSelector", "ListFieldSelectorNodeName", "ListFieldSelectorName"},
	"list-ignores-continue":     {"ListContinueAcrossWrites", "ListContinueInvalidToken", "ListContinueAfterCompaction"},
	"update-ignores-conditions": {"UpdatePreconditionUIDFails", "UpdatePreconditionResourceVersionFails"},
	"update-ignores-ttl":        {"UpdateSetsTTL", "UpdateClearsTTL"},
	"delete-ignores-conditions": {"DeletePreconditionUIDFails", "DeleteValidationRejects"},
	"stats-zero":                {"StatsCountsObjects"},
	"watch-ignores-rv":          {"WatchFromResourceVersionIsExclusive", "WatchFromResourceVersionReplaysDelete", "WatchTooOldResourceVersion"},
	"watch-ignores-selectors":   {"WatchLabelSelectorTransitions", "WatchFieldSelectorTransitions", "WatchSendInitialEventsWithSelector"},
	"watch-drops-bookmarks":     {"WatchProgressNotifyBookmark", "WatchSendInitialEventsEmpty", "WatchBookmarkFollowsEarlierEvents"},
	"watch-no-initial-events":   {"WatchSendInitialEventsConsistent", "WatchFromZeroSendsInitialState", "WatchFromUnsetSendsInitialState"},
	"watch-drops-deletes":       {"WatchFromZeroThenDelete", "WatchDeleteEventCarriesDeletionRevision"},
	"current-rv-stale":          {"CurrentResourceVersionMonotonic", "CurrentResourceVersionIsGlobal"},
	"create-out-unset":          {"CreateBasic"},
	"get-always-not-found":      {"GetIgnoreNotFoundExisting", "GetResourceVersionUnsetIsLatest"},
	"update-never-creates":      {"UpdateIgnoreNotFoundCreates"},
	"list-never-recursive":      {"ListRecursive", "ListNamespaceScoped", "ListRecursiveSiblingPrefix"},
	"watch-always-recursive":    {"WatchNonRecursiveSingleKey"},
	"watch-stop-noop":           {"WatchStopClosesChannel"},
	"list-rv-behind":            {"ListResourceVersionUnsetIsGlobalRevision", "ListEmptyHasResourceVersion", "ListExactCurrent"},
	"list-no-remaining-count":   {"ListPagination", "ListNamespaceScopedPaging"},
	"get-ignores-ignore-flag":   {"GetIgnoreNotFoundZeroesObject"},
	"watch-delete-rv-behind":    {"WatchDeleteEventCarriesDeletionRevision", "WatchFromResourceVersionReplaysDelete"},
	"watch-no-initial-end-mark": {"WatchSendInitialEventsConsistent", "WatchSendInitialEventsEmpty", "WatchSendInitialEventsFromResourceVersion"},
	"watch-modified-as-added":   {"WatchFromResourceVersionIsExclusive", "WatchLabelSelectorTransitions", "WatchOrderedUnderConcurrentWriters"},
	"watch-error-not-gone":      {"WatchTooOldResourceVersion"},
	"watch-duplicates":          {"WatchOrderedUnderConcurrentWriters", "WatchFromZeroSendsInitialState", "WatchManyWatchersSameEvents"},
}

// TestMutant runs in the child process: the cases of one mutant against
// the mutated store. Without the environment variable it does nothing.
func TestMutant(t *testing.T) {
	name := os.Getenv(mutantEnv)
	if name == "" {
		t.Skip("runs only as a child of TestSuiteDetectsMutants")
	}
	base := newEtcd3Env(false)
	storagetest.RunCases(t, func(t *testing.T) *storagetest.Env {
		env := base(t)
		env.Store = &mutated{Interface: env.Store, mode: name}
		return env
	}, mutants[name]...)
}

// TestSuiteDetectsMutants checks that every case listed for a mutant fails
// against it.
func TestSuiteDetectsMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns child test processes")
	}
	if os.Getenv(mutantEnv) != "" {
		t.Skip("child process")
	}
	// Children mostly wait for events that a mutant never delivers: run
	// several at once (goroutines, not t.Parallel, which -parallel caps at
	// GOMAXPROCS), each with short waits.
	type result struct {
		out []byte
		err error
	}
	results := make(map[string]*result, len(mutants))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 15)
	for name := range mutants {
		r := &result{}
		results[name] = r
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutant$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), mutantEnv+"="+name, storagetest.WaitTimeoutEnv+"=5s")
			r.out, r.err = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for name, cases := range mutants {
		t.Run(name, func(t *testing.T) {
			r := results[name]
			if r.err == nil {
				t.Fatalf("all cases passed against mutant %s:\n%s", name, r.out)
			}
			for _, c := range cases {
				if !strings.Contains(string(r.out), "--- FAIL: TestMutant/"+c+" ") {
					t.Errorf("case %s did not fail against mutant %s", c, name)
				}
			}
			if t.Failed() {
				t.Logf("child output:\n%s", r.out)
			}
		})
	}
}

// mutated is a storage.Interface with one feature removed.
type mutated struct {
	storage.Interface
	mode string
}

func (m *mutated) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	switch m.mode {
	case "create-ignores-ttl":
		ttl = 0
	case "create-out-unset":
		out = nil
	}
	return m.Interface.Create(ctx, key, obj, out, ttl)
}

func (m *mutated) Get(ctx context.Context, key string, opts storage.GetOptions, obj runtime.Object) error {
	switch m.mode {
	case "get-ignores-rv":
		opts.ResourceVersion = storage.RV{}
	case "get-ignores-ignore-flag":
		opts.IgnoreNotFound = false
	case "get-always-not-found":
		return storage.NewNotFoundError(key, 0)
	}
	return m.Interface.Get(ctx, key, opts, obj)
}

func (m *mutated) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	switch m.mode {
	case "list-rv-behind", "list-no-remaining-count":
		if err := m.Interface.GetList(ctx, key, opts, list); err != nil {
			return err
		}
		acc, err := meta.ListAccessor(list)
		if err != nil {
			return err
		}
		if m.mode == "list-no-remaining-count" {
			acc.SetRemainingItemCount(nil)
		} else if n, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64); err == nil && n > 1 {
			acc.SetResourceVersion(strconv.FormatInt(n-1, 10))
		}
		return nil
	}
	switch m.mode {
	case "list-ignores-exact":
		opts.ResourceVersion, opts.ResourceVersionMatch = storage.RV{}, ""
	case "list-ignores-limit":
		opts.Predicate.Limit = 0
	case "list-ignores-selectors":
		opts.Predicate.Label, opts.Predicate.Field = nil, nil
	case "list-ignores-continue":
		opts.Predicate.Continue = ""
	case "list-never-recursive":
		opts.Recursive = false
	}
	return m.Interface.GetList(ctx, key, opts, list)
}

func (m *mutated) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, tryUpdate storage.UpdateFunc, cached runtime.Object, opts storage.UpdateOptions) error {
	switch m.mode {
	case "update-never-creates":
		ignoreNotFound = false
	case "update-ignores-conditions":
		pre = nil
	case "update-ignores-ttl":
		inner := tryUpdate
		tryUpdate = func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			out, _, err := inner(in, res)
			return out, nil, err
		}
	}
	return m.Interface.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, tryUpdate, cached, opts)
}

func (m *mutated) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, cached runtime.Object, opts storage.DeleteOptions) error {
	if m.mode == "delete-ignores-conditions" {
		pre, validate = nil, storage.ValidateAllObjectFunc
	}
	return m.Interface.Delete(ctx, key, out, pre, validate, cached, opts)
}

func (m *mutated) Stats(ctx context.Context) (storage.Stats, error) {
	st, err := m.Interface.Stats(ctx)
	if m.mode == "stats-zero" {
		st.ObjectCount = 0
	}
	return st, err
}

func (m *mutated) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	rv, err := m.Interface.GetCurrentResourceVersion(ctx)
	if m.mode == "current-rv-stale" && rv > 1 {
		rv--
	}
	return rv, err
}

func (m *mutated) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	var edit func(watch.Event) (watch.Event, bool)
	switch m.mode {
	case "watch-ignores-rv":
		opts.ResourceVersion = storage.RV{}
	case "watch-ignores-selectors":
		opts.Predicate.Label, opts.Predicate.Field = nil, nil
	case "watch-no-initial-events":
		// Start every watch that asks for a state at "now" instead.
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents || opts.ResourceVersion.Revision() == 0 {
			noInitial := false
			opts.SendInitialEvents = &noInitial
			opts.ResourceVersion = storage.RV{}
		}
	case "watch-always-recursive":
		opts.Recursive = true
	case "watch-drops-bookmarks":
		edit = func(ev watch.Event) (watch.Event, bool) { return ev, ev.Type != watch.Bookmark }
	case "watch-drops-deletes":
		edit = func(ev watch.Event) (watch.Event, bool) { return ev, ev.Type != watch.Deleted }
	case "watch-delete-rv-behind":
		edit = func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Deleted {
				ev.Object = shiftRV(ev.Object, -1)
			}
			return ev, true
		}
	case "watch-no-initial-end-mark":
		edit = func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Bookmark {
				ev.Object = ev.Object.DeepCopyObject()
				if acc, err := meta.Accessor(ev.Object); err == nil {
					acc.SetAnnotations(nil)
				}
			}
			return ev, true
		}
	case "watch-modified-as-added":
		edit = func(ev watch.Event) (watch.Event, bool) {
			if ev.Type == watch.Modified {
				ev.Type = watch.Added
			}
			return ev, true
		}
	case "watch-error-not-gone":
		edit = func(ev watch.Event) (watch.Event, bool) {
			if st, ok := ev.Object.(*metav1.Status); ok {
				st = st.DeepCopy()
				st.Code, st.Reason = 500, metav1.StatusReasonInternalError
				ev.Object = st
			}
			return ev, true
		}
	}
	w, err := m.Interface.Watch(ctx, key, opts)
	switch {
	case err != nil:
		return w, err
	case m.mode == "watch-stop-noop":
		return stopless{w}, nil
	case m.mode == "watch-duplicates":
		return newDoubler(w), nil
	case edit != nil:
		return watch.Filter(w, edit), nil
	}
	return w, nil
}

// shiftRV returns a copy of obj with its resourceVersion moved by d.
func shiftRV(obj runtime.Object, d int64) runtime.Object {
	obj = obj.DeepCopyObject()
	if acc, err := meta.Accessor(obj); err == nil {
		if n, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64); err == nil {
			acc.SetResourceVersion(strconv.FormatInt(n+d, 10))
		}
	}
	return obj
}

// doubler delivers every event of a watch twice.
type doubler struct {
	in       watch.Interface
	out      chan watch.Event
	done     chan struct{}
	stopOnce sync.Once
}

func newDoubler(in watch.Interface) *doubler {
	d := &doubler{in: in, out: make(chan watch.Event), done: make(chan struct{})}
	go func() {
		defer close(d.out)
		for ev := range in.ResultChan() {
			for range 2 {
				select {
				case d.out <- ev:
				case <-d.done:
					return
				}
			}
		}
	}()
	return d
}

func (d *doubler) ResultChan() <-chan watch.Event { return d.out }

func (d *doubler) Stop() {
	d.stopOnce.Do(func() {
		close(d.done)
		d.in.Stop()
	})
}

// stopless is a watch whose Stop does nothing.
type stopless struct{ watch.Interface }

func (stopless) Stop() {}
