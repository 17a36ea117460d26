package etcd3

import (
	"context"
	"errors"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

// Defaults of the Config fields.
const (
	DefaultLeaseReuseDuration = 60 * time.Second
	DefaultLeaseMaxObjects    = 1000
	DefaultWatchBufferSize    = 100
	DefaultMaxListBatch       = 10000
	DefaultMaxCorruptObjects  = 100
	DefaultInitialEventsBatch = 10000
	// DefaultRequestTimeout bounds each etcd request of the store.
	DefaultRequestTimeout = 10 * time.Second
)

// Config configures a Store. Client, Codec, NewFunc and NewListFunc are
// required; every other field has a documented zero-value default.
type Config struct {
	// Client is the etcd client. The Store does not close it.
	Client *clientv3.Client
	// Codec encodes objects for storage and decodes them back.
	Codec runtime.Codec
	// NewFunc returns a new empty object of the stored type (used for watch
	// events, bookmarks and update states).
	NewFunc func() runtime.Object
	// NewListFunc returns a new empty list of the stored type.
	NewListFunc func() runtime.Object
	// Prefix is the etcd path prefix prepended to every key, e.g.
	// "/registry". "" means keys are stored as given.
	Prefix string
	// ResourcePrefix is the key prefix every key passed to the methods must
	// be equal to or below, e.g. "/widgets". Stats and
	// GetCurrentResourceVersion use its range. "" allows any key.
	ResourcePrefix string
	// Transformer transforms values on their way to and from etcd; nil
	// means value.Identity. Store.SetTransformer replaces it at run time.
	Transformer value.Transformer
	// Versioner reads and writes resource versions; nil means
	// storage.APIObjectVersioner{}.
	Versioner storage.Versioner
	// LeaseReuseDuration bounds how much longer than requested a reused
	// lease may live: a write with a TTL reuses the lease granted last if
	// that lease expires within [ttl, ttl+min(LeaseReuseDuration, 5% of ttl)].
	// 0 means DefaultLeaseReuseDuration (60 s).
	LeaseReuseDuration time.Duration
	// LeaseMaxObjects caps how many writes share one lease; 0 means
	// DefaultLeaseMaxObjects (1000).
	LeaseMaxObjects int
	// WatchBufferSize is the capacity of each watch's result channel; 0
	// means DefaultWatchBufferSize (100).
	WatchBufferSize int
	// MaxListBatch caps the number of keys fetched from etcd at once while a
	// filtered paginated list grows its batch; 0 means DefaultMaxListBatch
	// (10000).
	MaxListBatch int64
	// InitialEventsBatch is the page size used to read the initial state of
	// a watch; 0 means DefaultInitialEventsBatch (10000).
	InitialEventsBatch int64
	// MaxCorruptObjects is how many corrupt objects (values that cannot be
	// transformed or decoded) a list reads past, naming each in its error
	// (storage.Error.CorruptKeys), before it gives up; 0 means
	// DefaultMaxCorruptObjects (100, Kubernetes' limit). Negative: a list
	// fails at its first corrupt object, as Kubernetes does without its
	// AllowUnsafeMalformedObjectDeletion feature.
	MaxCorruptObjects int
	// RequestTimeout bounds each request the store makes to etcd (each
	// round trip of a list, update or watch's initial read; not a watch's
	// stream): when etcd does not answer within it, the call fails with a
	// storage.ErrUnavailable error naming the endpoints and the last dial
	// or RPC error, and while etcd stays unreachable with the client
	// disconnected, later calls fail at once. It must exceed the slowest
	// single round trip, an unpaginated list of the whole resource (a
	// cacher's list) included. 0 means DefaultRequestTimeout (10 s);
	// negative, only the caller's context bounds a request.
	RequestTimeout time.Duration
	// Health tracks whether etcd answers; stores on one client share one
	// and its owner runs it (Health.Run) to notice a dead or frozen etcd
	// without traffic and make requests fail fast meanwhile. nil: the store
	// makes its own, fed only by its requests and ReadinessCheck.
	Health *Health
	// Logger receives logs (etcd lost and restored, once per change;
	// corrupt objects; watch failures); nil means slog.Default().
	Logger *slog.Logger
}

// Store is the etcd implementation of storage.Interface. Create it with
// New; it is safe for concurrent use. Close stops the watches it started.
type Store struct {
	client         *clientv3.Client
	kv             *boundedKV // every KV request goes through it
	health         *Health
	requestTimeout time.Duration
	codec          runtime.Codec
	newFunc        func() runtime.Object
	newListFunc    func() runtime.Object
	pathPrefix     string // etcd prefix, always ending in "/"
	resourcePrefix string // "" or "/name" without a trailing slash
	versioner      storage.Versioner
	leases         *leaseManager
	compaction     *compactionTracker
	watchBuffer    int
	maxListBatch   int64
	maxCorrupt     int
	initialBatch   int64
	logger         *slog.Logger

	transformer  atomic.Pointer[transformerRef] // see SetTransformer
	observersMu  sync.Mutex                     // guards observers, nextObserver
	observers    map[int]func()
	nextObserver int

	// mu guards watchers and closed.
	mu       sync.Mutex
	watchers map[*watcher]struct{}
	closed   bool
}

var _ storage.Interface = (*Store)(nil)

// New validates cfg, fills its defaults and returns a Store.
func New(cfg Config) (*Store, error) {
	if cfg.Client == nil {
		return nil, errors.New("etcd3: Config.Client is required")
	}
	if cfg.Codec == nil {
		return nil, errors.New("etcd3: Config.Codec is required")
	}
	if cfg.NewFunc == nil || cfg.NewListFunc == nil {
		return nil, errors.New("etcd3: Config.NewFunc and Config.NewListFunc are required")
	}
	if cfg.LeaseReuseDuration < 0 || cfg.LeaseMaxObjects < 0 || cfg.WatchBufferSize < 0 ||
		cfg.MaxListBatch < 0 || cfg.InitialEventsBatch < 0 {
		return nil, errors.New("etcd3: negative Config values are not allowed")
	}
	if strings.Contains(cfg.ResourcePrefix, "..") || strings.Contains(cfg.Prefix, "..") {
		return nil, errors.New("etcd3: prefixes must not contain \"..\"")
	}
	s := &Store{
		client:         cfg.Client,
		codec:          cfg.Codec,
		newFunc:        cfg.NewFunc,
		newListFunc:    cfg.NewListFunc,
		pathPrefix:     normalizePathPrefix(cfg.Prefix),
		resourcePrefix: normalizeResourcePrefix(cfg.ResourcePrefix),
		versioner:      cfg.Versioner,
		watchBuffer:    cfg.WatchBufferSize,
		maxListBatch:   cfg.MaxListBatch,
		maxCorrupt:     cfg.MaxCorruptObjects,
		initialBatch:   cfg.InitialEventsBatch,
		logger:         cfg.Logger,
		watchers:       make(map[*watcher]struct{}),
	}
	if cfg.Transformer == nil {
		cfg.Transformer = value.Identity
	}
	s.transformer.Store(&transformerRef{cfg.Transformer})
	if s.versioner == nil {
		s.versioner = storage.APIObjectVersioner{}
	}
	if s.watchBuffer == 0 {
		s.watchBuffer = DefaultWatchBufferSize
	}
	if s.maxCorrupt == 0 {
		s.maxCorrupt = DefaultMaxCorruptObjects
	}
	if s.maxListBatch == 0 {
		s.maxListBatch = DefaultMaxListBatch
	}
	if s.initialBatch == 0 {
		s.initialBatch = DefaultInitialEventsBatch
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	s.requestTimeout = cfg.RequestTimeout
	if s.requestTimeout == 0 {
		s.requestTimeout = DefaultRequestTimeout
	}
	s.health = cfg.Health
	if s.health == nil {
		s.health = NewHealth(cfg.Client, HealthConfig{Logger: s.logger})
	}
	s.kv = &boundedKV{kv: cfg.Client.KV, timeout: s.requestTimeout, health: s.health}
	reuse := cfg.LeaseReuseDuration
	if reuse == 0 {
		reuse = DefaultLeaseReuseDuration
	}
	maxObjects := cfg.LeaseMaxObjects
	if maxObjects == 0 {
		maxObjects = DefaultLeaseMaxObjects
	}
	s.leases = newLeaseManager(cfg.Client, reuse, maxObjects, time.Now)
	s.leases.bound = func(ctx context.Context, fn func(ctx context.Context) error) error {
		return s.kv.call(ctx, s.requestTimeout, false, fn) // a lease grant: retrying it is harmless
	}
	s.compaction = newCompactionTracker(s.kv, s.resourceRangePrefix())
	return s, nil
}

func normalizePathPrefix(p string) string {
	p = path.Join("/", p)
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

func normalizeResourcePrefix(p string) string {
	if p == "" {
		return ""
	}
	p = path.Join("/", p)
	if p == "/" {
		return ""
	}
	return p
}

// Close stops every watch started by the store and waits for their
// goroutines to exit. Later calls to Watch fail. The etcd client is not
// closed. Close is safe to call more than once.
func (s *Store) Close() {
	s.mu.Lock()
	s.closed = true
	ws := make([]*watcher, 0, len(s.watchers))
	for w := range s.watchers {
		ws = append(ws, w)
	}
	s.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
}

// Versioner implements storage.Interface.
func (s *Store) Versioner() storage.Versioner { return s.versioner }

// ReadinessCheck implements storage.Interface: the store is ready while
// etcd answers. It reports the storage.ErrUnavailable error of the store's
// last request when that is less than a second old or the client has no
// connection up, else it probes etcd with a count-only linearizable read
// bounded by 2 s (and RequestTimeout); concurrent checks share one probe.
// A closed store reports ErrNotReady.
func (s *Store) ReadinessCheck() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return &storage.Error{Code: storage.CodeNotReady, Msg: "etcd3 store is closed"}
	}
	timeout := readinessProbeTimeout
	if s.requestTimeout > 0 {
		timeout = min(timeout, s.requestTimeout)
	}
	return s.health.check(timeout)
}

// Stats implements storage.Interface: it counts the keys in the
// ResourcePrefix range.
func (s *Store) Stats(ctx context.Context) (storage.Stats, error) {
	if err := ctx.Err(); err != nil {
		return storage.Stats{}, ctxError(ctx, "stats")
	}
	resp, err := s.kv.Get(ctx, s.resourceRangePrefix(), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return storage.Stats{}, s.interpret(ctx, err, "", 0, "stats")
	}
	return storage.Stats{ObjectCount: resp.Count}, nil
}

// GetCurrentResourceVersion implements storage.Interface: the header
// revision of a linearizable read of the resource prefix key.
func (s *Store) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, ctxError(ctx, "current resource version")
	}
	resp, err := s.kv.Get(ctx, s.resourceRangePrefix(), clientv3.WithCountOnly())
	if err != nil {
		return 0, s.interpret(ctx, err, "", 0, "current resource version")
	}
	if resp.Header == nil || resp.Header.Revision <= 0 {
		return 0, errors.New("etcd3: response without a revision")
	}
	return uint64(resp.Header.Revision), nil
}

// RequestWatchProgress implements storage.Interface. It asks etcd for a
// progress notification on the gRPC watch stream that the store's watches
// share (see watchStreamContext); etcd answers once every watch on that
// stream has caught up. Watches opened with ProgressNotify and bookmarks
// allowed turn the answer into a BOOKMARK. Without open watches it does
// nothing (a request would only open an idle stream).
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	s.mu.Lock()
	idle := len(s.watchers) == 0
	s.mu.Unlock()
	if idle {
		return nil
	}
	if err := s.client.RequestProgress(watchStreamContext(ctx)); err != nil {
		return s.interpret(ctx, err, "", 0, "request watch progress")
	}
	return nil
}

// CompactRevision implements storage.Interface: the revision etcd has
// compacted its history to (0 if none), whoever compacted it. The value is
// at most about a second old, and exact right after an operation of this
// store failed because of a compaction (see compactionTracker).
func (s *Store) CompactRevision() int64 {
	return s.compaction.current()
}

// RefreshCompactRevision implements storage.CompactRevisionRefresher: it
// asks etcd now (one small range while nothing new was compacted).
func (s *Store) RefreshCompactRevision(ctx context.Context) (int64, error) {
	rev, err := s.compaction.refresh(ctx)
	if err != nil {
		return rev, s.interpret(ctx, err, "", 0, "ask etcd for its compacted revision")
	}
	return rev, nil
}
