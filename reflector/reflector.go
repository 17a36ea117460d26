package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
)

// ReflectorStore is what a Reflector writes into. DeltaFIFO implements it,
// and so does every Store.
type ReflectorStore[T any] interface {
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
	// Replace swaps the content for a full list at resource version rv.
	Replace(list []T, rv string) error
	// Resync re-delivers the known objects (DeltaFIFO) or does nothing.
	Resync() error
}

// Default timings of a Reflector.
const (
	DefaultPageSize          = 500
	DefaultMinWatchTimeout   = 5 * time.Minute
	DefaultBackoffResetAfter = 2 * time.Minute
)

// DefaultBackoff is the backoff between failed list/watch attempts: 800ms
// doubling up to 30s. The reflector draws each actual delay uniformly from
// [0, delay] ("full jitter") unless ReflectorConfig.NoFullJitter is set.
var DefaultBackoff = wait.Backoff{Duration: 800 * time.Millisecond, Factor: 2, Steps: 1 << 30, Cap: 30 * time.Second}

// ReflectorConfig configures a Reflector.
type ReflectorConfig[T Object] struct {
	// Name appears in logs; "" means "reflector".
	Name string
	// ListerWatcher is the source. Required.
	ListerWatcher ListerWatcher
	// Store receives the objects. Required.
	Store ReflectorStore[T]
	// PageSize is the list page size; 0 means DefaultPageSize, negative
	// turns pagination off.
	PageSize int64
	// ResyncPeriod, when > 0, calls Store.Resync that often while watching
	// (if ShouldResync is nil or returns true).
	ResyncPeriod time.Duration
	// ShouldResync gates each periodic resync; nil means always.
	ShouldResync func() bool
	// Backoff paces retries after errors; the zero value means DefaultBackoff.
	Backoff wait.Backoff
	// NoFullJitter uses Backoff's delays as they are (with Backoff.Jitter's
	// own multiplicative jitter, if any) instead of drawing each delay
	// uniformly from [0, delay].
	NoFullJitter bool
	// BackoffResetAfter resets the backoff after this long without
	// errors; 0 means DefaultBackoffResetAfter.
	BackoffResetAfter time.Duration
	// MinWatchTimeout: each watch asks for a random timeout in
	// [MinWatchTimeout, 2*MinWatchTimeout); 0 means DefaultMinWatchTimeout.
	MinWatchTimeout time.Duration
	// UseWatchList streams the initial state through a watch with
	// sendInitialEvents instead of listing; on failure the reflector lists.
	UseWatchList bool
	// WatchErrorHandler is called with every list, watch or store error
	// instead of the default, as client-go's; nil means
	// DefaultWatchErrorHandler on Logger.
	WatchErrorHandler func(err error)
	// Logger receives diagnostics (list and watch failures, relists);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Reflector lists a resource into a store, then keeps it current with a
// watch from the list's resource version. See ListAndWatch for the rules.
type Reflector[T Object] struct {
	cfg    ReflectorConfig[T]
	log    *slog.Logger
	delay  wait.DelayFunc
	relist chan struct{} // a Relist asked for, not yet begun (capacity 1)

	mu sync.Mutex
	// lastSyncRV is the RV of the last list, bookmark or event applied.
	lastSyncRV string
	// rvUnavailable is set when a request at lastSyncRV failed with
	// "expired" or "too large", or a Relist was asked for; the next list
	// is then a consistent read.
	rvUnavailable bool
	// paginatedResult records that an RV "0" list came back in pages: the
	// server does not serve lists from a cache, so keep paginating.
	paginatedResult bool
}

// NewReflector validates cfg, fills its defaults and returns a Reflector.
func NewReflector[T Object](cfg ReflectorConfig[T]) (*Reflector[T], error) {
	if cfg.ListerWatcher == nil || isNil(cfg.ListerWatcher) {
		return nil, errors.New("reflector: ListerWatcher is required")
	}
	if cfg.Store == nil || isNil(cfg.Store) {
		return nil, errors.New("reflector: Store is required")
	}
	if cfg.Name == "" {
		cfg.Name = "reflector"
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.Backoff == (wait.Backoff{}) {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.BackoffResetAfter <= 0 {
		cfg.BackoffResetAfter = DefaultBackoffResetAfter
	}
	if cfg.MinWatchTimeout <= 0 {
		cfg.MinWatchTimeout = DefaultMinWatchTimeout
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	delay := cfg.Backoff.DelayWithReset(clock.RealClock{}, cfg.BackoffResetAfter)
	if !cfg.NoFullJitter {
		delay = fullJitter(delay)
	}
	return &Reflector[T]{cfg: cfg, log: log.With("reflector", cfg.Name), delay: delay, relist: make(chan struct{}, 1)}, nil
}

// fullJitter draws each delay of next uniformly from [0, delay].
func fullJitter(next wait.DelayFunc) wait.DelayFunc {
	return func() time.Duration {
		d := next()
		if d <= 0 {
			return 0
		}
		return rand.N(d + 1)
	}
}

// Run lists and watches until ctx is done, backing off between failed
// attempts. It returns after every goroutine it started has ended.
func (r *Reflector[T]) Run(ctx context.Context) {
	for ctx.Err() == nil {
		err := r.ListAndWatch(ctx)
		if errors.Is(err, errRelist) {
			r.log.Info("relisting consistently, as asked")
			continue
		}
		if err != nil && ctx.Err() == nil {
			r.reportError(err)
		}
		if !sleepCtx(ctx, r.retryDelay(err)) {
			return
		}
	}
}

// retryDelay is the wait before trying again after err (nil: after a
// normal end): the backoff's next delay, raised to the delay the server
// asked for in err's Status (the Retry-After of a 429 or 503), capped at
// Backoff.Cap. The HTTP transport sends a list's 429 again itself; a
// watch's comes here.
func (r *Reflector[T]) retryDelay(err error) time.Duration {
	d := r.delay()
	if err == nil {
		return d
	}
	if s, ok := apierrors.SuggestsClientDelay(err); ok && s > 0 {
		ask := time.Duration(s) * time.Second
		if r.cfg.Backoff.Cap > 0 {
			ask = min(ask, r.cfg.Backoff.Cap)
		}
		d = max(d, ask)
	}
	return d
}

// ListAndWatch fills the store once (a list, or a watch-list stream) and
// then watches until an error needs a relist, or ctx is done:
//   - a watch that ends normally is reopened from the last synced RV;
//   - 429, 503, timeouts and refused connections back off and re-watch
//     (waiting at least the Retry-After the server asked for);
//   - 410 Gone and other errors return, so that Run relists;
//   - a Relist returns at once, and Run lists with a consistent read.
func (r *Reflector[T]) ListAndWatch(ctx context.Context) error {
	var w watch.Interface
	if r.cfg.UseWatchList {
		var err error
		if w, err = r.watchList(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.log.Info("watch-list failed, falling back to list", "err", err)
			r.reportError(err)
			w = nil
		}
	}
	if w == nil {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	stopResync := r.startResync(ctx)
	defer stopResync()
	return r.watchLoop(ctx, w)
}

// errRelist ends a watch when Relist was called.
var errRelist = errors.New("reflector: relist asked for")

// Relist makes the reflector end its watch, list again with a consistent
// read (RV unset: the server's current state) and watch from that list's
// RV: how a store that no event or bookmark would bring up to the current
// revision gets there (a resource without writes, over a server that
// sends bookmarks rarely). The store is replaced; objects that did not
// change come out of it as syncs, not changes. It does not wait; a Relist
// not yet begun absorbs the next.
func (r *Reflector[T]) Relist() {
	select {
	case r.relist <- struct{}{}:
	default:
	}
}

// LastSyncResourceVersion returns the RV of the last list, bookmark or
// event the reflector applied ("" before the first list). It says nothing
// about what the store's consumers have processed.
func (r *Reflector[T]) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSyncRV
}

func (r *Reflector[T]) setLastSyncRV(rv string) {
	if rv == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncRV = rv
}

func (r *Reflector[T]) setRVUnavailable(v bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rvUnavailable = v
}

// relistResourceVersion: "0" before anything was seen (a cache may answer),
// "" after the last RV turned out unavailable (consistent read), else the
// last synced RV so that a relist never goes back in time.
func (r *Reflector[T]) relistResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastSyncRV == "":
		return "0"
	}
	return r.lastSyncRV
}

// rewatchResourceVersion is the RV a watch-list stream starts from.
func (r *Reflector[T]) rewatchResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}

func (r *Reflector[T]) watchTimeoutSeconds() *int64 {
	min := r.cfg.MinWatchTimeout.Seconds()
	s := int64(min * (1 + rand.Float64()))
	if s < 1 {
		s = 1
	}
	return &s
}

func (r *Reflector[T]) reportError(err error) {
	if r.cfg.WatchErrorHandler != nil {
		r.log.Debug("list/watch error", "err", err)
		r.cfg.WatchErrorHandler(err)
		return
	}
	DefaultWatchErrorHandler(r.log, err)
}

// DefaultWatchErrorHandler logs a reflector's list, watch or store error
// on log, at a level that says whether someone should look, as client-go's
// default handler does: a watch closed because its resource version
// expired (410, the reflector relists) at Info; a connection the server
// ended (EOF) or a canceled request at Debug; any other failure at Warn.
func DefaultWatchErrorHandler(log *slog.Logger, err error) {
	switch {
	case isExpired(err):
		log.Info("watch closed, relisting", "err", err)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.Canceled):
		log.Debug("watch closed", "err", err)
	default:
		log.Warn("list/watch failed", "err", err)
	}
}

// startResync calls Store.Resync every ResyncPeriod until the returned stop
// function is called; stop waits for the goroutine.
func (r *Reflector[T]) startResync(ctx context.Context) (stop func()) {
	if r.cfg.ResyncPeriod <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.cfg.ResyncPeriod)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if r.cfg.ShouldResync == nil || r.cfg.ShouldResync() {
				if err := r.cfg.Store.Resync(); err != nil {
					r.reportError(fmt.Errorf("resync: %w", err))
				}
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// sleepCtx waits d or until ctx is done; it reports whether ctx is live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// listOptionsForWatch are the options of a plain resumed watch.
func (r *Reflector[T]) listOptionsForWatch() metav1.ListOptions {
	return metav1.ListOptions{
		ResourceVersion:     r.LastSyncResourceVersion(),
		AllowWatchBookmarks: true,
		TimeoutSeconds:      r.watchTimeoutSeconds(),
	}
}
