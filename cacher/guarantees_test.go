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

// TestWatchGuarantees runs the randomized checker of the six watch
// guarantees against the cacher. The small history and watcher buffers
// force catch-up from etcd and lagging watchers during the run. It compacts
// etcd, so it must not run in parallel with other tests.
func TestWatchGuarantees(t *testing.T) {
	t.Run("Decoded", func(t *testing.T) { runWatchGuarantees(t) })
	t.Run("Encoded", func(t *testing.T) { runWatchGuarantees(t, keepEncoded(widget.Codec)) })
}

func runWatchGuarantees(t *testing.T, mods ...func(*cacher.Config)) {
	prefix := embedtest.Prefix(t)
	store := newStore(t, prefix, false)
	c := startCacher(t, store, append(mods, func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 64, 256
		cfg.WatcherBufferSize = 8
		// Watchers that fall further behind than the small history wait
		// for a catch-up stream rather than fail with 429.
		cfg.MaxCatchUpStreams = 64
		cfg.CatchUpWaitTimeout = time.Minute
	})...)
	storagetest.RunWatchGuarantees(t, storagetest.GuaranteeEnv{
		Store:          c,
		Client:         etcd.Client,
		EtcdPrefix:     prefix,
		ResourcePrefix: "/widgets",
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		GetAttrs:       widget.GetAttrs,
		Compact: func(ctx context.Context, rev int64) error {
			return etcd.Compact(ctx, rev)
		},
	}, storagetest.GuaranteeOptions{})
}
