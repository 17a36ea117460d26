package cacher_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage/storagetest"
)

func newCacherEnv(unstructured bool, mods ...func(*cacher.Config)) func(t *testing.T) *storagetest.Env {
	return func(t *testing.T) *storagetest.Env {
		prefix := embedtest.Prefix(t)
		store := newStore(t, prefix, unstructured)
		c := startCacher(t, store, append([]func(*cacher.Config){func(cfg *cacher.Config) {
			// Cases that ask for a future RV wait this long for a 504.
			cfg.FreshWaitTimeout = 500 * time.Millisecond
			cfg.ProgressInterval = 100 * time.Millisecond
			if unstructured {
				cfg.NewFunc, cfg.NewListFunc = widget.NewUnstructured, widget.NewUnstructuredList
			}
		}}, mods...)...)
		return &storagetest.Env{
			Store:          c,
			ResourcePrefix: "/widgets",
			Client:         etcd.Client,
			EtcdPrefix:     etcdPrefix(t),
			Compact: func(ctx context.Context, rev int64) error {
				return etcd.Compact(ctx, rev)
			},
			Unstructured: unstructured,
		}
	}
}

// TestConformance runs the whole storage conformance suite against the
// cacher over an etcd3 store.
func TestConformance(t *testing.T) {
	storagetest.RunAll(t, newCacherEnv(false))
}

// TestConformanceEncoded runs the whole suite against a cacher that keeps
// its objects encoded (Config.Codec).
func TestConformanceEncoded(t *testing.T) {
	storagetest.RunAll(t, newCacherEnv(false, keepEncoded(widget.Codec)))
}

// TestConformanceUnstructured runs the cases whose encoding paths differ
// for unstructured objects.
func TestConformanceUnstructured(t *testing.T) {
	storagetest.RunCases(t, newCacherEnv(true),
		"CreateBasic", "GetResourceVersionUnsetIsLatest", "GetIgnoreNotFoundZeroesObject",
		"ListRecursive", "ListExactOlder", "ListPagination", "ListFilterWithLimitFillsPages",
		"ListFieldSelectorNodeName", "UpdateBasic", "DeleteBasic",
		"WatchFromZeroSendsInitialState", "WatchFromResourceVersionReplaysDelete",
		"WatchLabelSelectorTransitions", "WatchProgressNotifyBookmark", "WatchSendInitialEventsConsistent",
	)
}
