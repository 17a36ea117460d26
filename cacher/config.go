package cacher

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Defaults of the zero-valued limits of Config.
const (
	DefaultWatcherBufferSize     = 100
	DefaultMaxCatchUpStreams     = 16
	DefaultCatchUpWaitTimeout    = 5 * time.Second
	DefaultReadyWaitTimeout      = 3 * time.Second
	DefaultFreshWaitTimeout      = 3 * time.Second
	DefaultConsistentReadTimeout = 3 * time.Second
	DefaultBookmarkInterval      = time.Minute
	DefaultProgressInterval      = time.Second
	DefaultCatchUpBatch          = 256
	DefaultListPageSize          = 10000
	DefaultWatchRecoveryTimeout  = 2 * time.Second
	// DefaultWakeCoalesce is how long a burst of changes may wait for the
	// watchers' next round of wake-ups (see Config.WakeCoalesce).
	DefaultWakeCoalesce = 2 * time.Millisecond
	// DefaultConsistencyCheckInterval is how often the cache is compared
	// with the storage (jittered by up to 20%).
	DefaultConsistencyCheckInterval = 5 * time.Minute
)

// Config configures a Cacher. Storage, ResourcePrefix, NewFunc and
// NewListFunc are required; every other zero value means the documented default.
type Config struct {
	// Storage is the store the cache is fed from and writes go to.
	Storage storage.Interface
	// ResourcePrefix is the key prefix of the resource, such as "/widgets".
	ResourcePrefix string
	// NewFunc and NewListFunc return an empty object and list of the resource.
	NewFunc, NewListFunc func() runtime.Object
	// KeyFunc maps an object to its key; nil means
	// ResourcePrefix/<namespace>/<name> (ResourcePrefix/<name> without namespace).
	KeyFunc func(obj runtime.Object) (string, error)
	// GetAttrs extracts label and field sets; nil means storage.DefaultAttrs.
	GetAttrs storage.AttrFunc
	// IndexLabels and IndexFields name labels and fields whose exact values
	// index both cached objects (for selector lists) and watchers (for dispatch).
	// metadata.name and metadata.namespace are always indexed for dispatch.
	IndexLabels, IndexFields []string
	// Versioner reads and writes RVs; nil means Storage.Versioner().
	Versioner storage.Versioner
	// Clock times the cacher's schedule: bookmark rounds, consistency
	// checks, progress requests, the shared catch-up
	// read and the cache's event window. The cacher's liveness polls and
	// retries (and deadline bookmarks, aimed at a context's deadline) run on
	// the wall clock, so that a fake Clock in a test cannot starve the
	// cache's own list and watch. nil means the real clock.
	Clock clock.WithTickerAndDelayedExecution
	// Logger receives structured logs (lists, re-initialisations,
	// consistency checks, watch failures); nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives measurements; nil means no-op (see NewPrometheusMetrics).
	Metrics Metrics

	// HistoryWindow is the span of events the cache tries to keep (0: watchcache.DefaultWindow).
	HistoryWindow time.Duration
	// HistoryMinCapacity and HistoryMaxCapacity bound the event buffer
	// (0: watchcache.DefaultMinCapacity / DefaultMaxCapacity).
	HistoryMinCapacity, HistoryMaxCapacity int
	// MaxSnapshots bounds the past states kept for exact lists and paging (0: watchcache.DefaultMaxSnapshots).
	MaxSnapshots int
	// SpacedSnapshots spreads the snapshots over the whole event history, so
	// that exact lists and continue pages far back are served from memory,
	// for more memory (see watchcache.Config.SpacedSnapshots).
	SpacedSnapshots bool
	// Codec, when set, makes the cache keep objects encoded, not decoded
	// (see watchcache.Config.Codec): memory near the encoded size, for a
	// decoding per object read that no other reader holds at the time.
	// Its objects must round-trip exactly, resourceVersion included.
	Codec watchcache.Codec
	// NoPacking turns off the cache's memory packing (see
	// watchcache.Config.NoPacking); by default the cache shares repeated
	// strings and maps of the objects it keeps.
	NoPacking bool
	// ListPageSize is how many keys one page of the cacher's own list (the
	// first, and every relist) reads from the storage; all pages are read
	// at the first page's revision (0: DefaultListPageSize).
	ListPageSize int
	// WatcherBufferSize is how many live events that concern a watcher may
	// wait in the hub's log for it; one more takes it out of live dispatch
	// and it catches up from history (0: 100).
	WatcherBufferSize int
	// WakeCoalesce is how long after a round of wake-ups of the live
	// watchers the changes of a burst wait for the next round, so that a
	// client is woken (and a watcher's channel is sent to) once for the
	// changes of that interval rather than once per change; a change after
	// a quiet interval at least this long goes out at once. 0 means
	// DefaultWakeCoalesce; negative, none.
	WakeCoalesce time.Duration
	// MaxCatchUpStreams bounds the new watches that start from etcd's
	// history (older than the cache's) at a time, and the shared reads
	// of etcd's history with readers, each one storage watch (0: 16).
	MaxCatchUpStreams int
	// CatchUpWaitTimeout is how long a new watch from etcd's history waits
	// for its turn before failing with ErrTooManyRequests (0: 5 s).
	CatchUpWaitTimeout time.Duration
	// CatchUpBatch is how many events a catching-up watcher copies from the cache at a time (0: 256).
	CatchUpBatch int
	// ReadyWaitTimeout is how long reads and watches wait for the first list (0: 3 s).
	ReadyWaitTimeout time.Duration
	// WatchRecoveryTimeout is how long the cache's storage watch may keep
	// failing without progress (an undecodable value, a failing
	// transformer) before the cacher ends every watch with an error event
	// and re-initialises from a fresh list (0: 2 s). Outages of the storage
	// (unreachable, timeouts) do not count: they are waited out.
	WatchRecoveryTimeout time.Duration
	// ConsistencyCheckInterval is how often the cache's state is compared
	// with the storage's at the same revision, keys and resource versions
	// only, when the storage can list them (storage.KeyVersionLister); on a
	// difference the cacher logs the keys, counts it, ends the watches whose
	// scope holds a differing key and relists, keeping the other watches
	// (0: DefaultConsistencyCheckInterval; negative: never). Each wait is
	// jittered by up to 20%.
	ConsistencyCheckInterval time.Duration
	// FreshWaitTimeout is how long a read or watch at RV N waits for the
	// cache to reach N before a too-large-RV error (0: 3 s).
	FreshWaitTimeout time.Duration
	// ConsistentReadTimeout is how long a consistent read (RV "") waits for
	// the cache before it is served by the storage (0: 3 s).
	ConsistentReadTimeout time.Duration
	// BookmarkInterval is how often watchers that allow bookmarks get one (0: 1 min).
	BookmarkInterval time.Duration
	// ProgressInterval is how often the cacher asks the storage for a
	// progress notification so the cache RV advances without writes (0: 1 s).
	ProgressInterval time.Duration
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Storage == nil {
		errs = append(errs, errors.New("Storage is required"))
	}
	if c.ResourcePrefix == "" || !strings.HasPrefix(c.ResourcePrefix, "/") {
		errs = append(errs, fmt.Errorf("ResourcePrefix %q must start with /", c.ResourcePrefix))
	}
	if c.NewFunc == nil || c.NewListFunc == nil {
		errs = append(errs, errors.New("NewFunc and NewListFunc are required"))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("cacher: invalid config: %w", errors.Join(errs...))
	}
	c.ResourcePrefix = strings.TrimSuffix(c.ResourcePrefix, "/")
	if c.KeyFunc == nil {
		c.KeyFunc = defaultKeyFunc(c.ResourcePrefix)
	}
	if c.GetAttrs == nil {
		c.GetAttrs = storage.DefaultAttrs
	}
	if c.Versioner == nil {
		c.Versioner = c.Storage.Versioner()
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = NoopMetrics{}
	}
	setDefault(&c.WatcherBufferSize, DefaultWatcherBufferSize)
	setDefault(&c.MaxCatchUpStreams, DefaultMaxCatchUpStreams)
	setDefault(&c.CatchUpBatch, DefaultCatchUpBatch)
	setDefault(&c.ListPageSize, DefaultListPageSize)
	setDefault(&c.CatchUpWaitTimeout, DefaultCatchUpWaitTimeout)
	setDefault(&c.ReadyWaitTimeout, DefaultReadyWaitTimeout)
	setDefault(&c.WatchRecoveryTimeout, DefaultWatchRecoveryTimeout)
	setDefault(&c.FreshWaitTimeout, DefaultFreshWaitTimeout)
	setDefault(&c.ConsistentReadTimeout, DefaultConsistentReadTimeout)
	setDefault(&c.BookmarkInterval, DefaultBookmarkInterval)
	setDefault(&c.ProgressInterval, DefaultProgressInterval)
	if c.ConsistencyCheckInterval == 0 {
		c.ConsistencyCheckInterval = DefaultConsistencyCheckInterval
	}
	if c.WakeCoalesce == 0 {
		c.WakeCoalesce = DefaultWakeCoalesce
	}
	return c, nil
}

func setDefault[T int | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

func (c Config) cacheConfig() watchcache.Config {
	return watchcache.Config{KeyFunc: c.KeyFunc, GetAttrs: c.GetAttrs, Versioner: c.Versioner,
		IndexLabels: c.IndexLabels, IndexFields: c.IndexFields, Window: c.HistoryWindow,
		MinCapacity: c.HistoryMinCapacity, MaxCapacity: c.HistoryMaxCapacity,
		MaxSnapshots: c.MaxSnapshots, SpacedSnapshots: c.SpacedSnapshots, Clock: c.Clock, Codec: c.Codec, NoPacking: c.NoPacking}
}

func defaultKeyFunc(prefix string) func(runtime.Object) (string, error) {
	return func(obj runtime.Object) (string, error) {
		a, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		if a.GetName() == "" {
			return "", errors.New("object has no name")
		}
		if ns := a.GetNamespace(); ns != "" {
			return prefix + "/" + ns + "/" + a.GetName(), nil
		}
		return prefix + "/" + a.GetName(), nil
	}
}
