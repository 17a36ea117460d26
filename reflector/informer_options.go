package reflector

import (
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// InformerOption configures a SharedIndexInformer.
type InformerOption func(*informerOptions)

type informerOptions struct {
	name              string
	resync            time.Duration
	logger            *slog.Logger
	onPanic           func(recovered any)
	useWatchList      bool
	pageSize          int64
	backoff           wait.Backoff
	minWatchTimeout   time.Duration
	watchErrorHandler func(error)
}

// WithName names the informer in logs.
func WithName(name string) InformerOption { return func(o *informerOptions) { o.name = name } }

// WithResyncPeriod sets the default resync period of handlers added with
// AddEventHandler; 0 (the default) means no resync.
func WithResyncPeriod(d time.Duration) InformerOption {
	return func(o *informerOptions) { o.resync = d }
}

// WithLogger sets the logger of the informer and its reflector; the
// default is slog.Default().
func WithLogger(l *slog.Logger) InformerOption { return func(o *informerOptions) { o.logger = l } }

// WithHandlerPanicHandler is called with the value a handler panicked
// with; the informer goes on with the next notification. The default logs
// it at error level.
func WithHandlerPanicHandler(f func(recovered any)) InformerOption {
	return func(o *informerOptions) { o.onPanic = f }
}

// WithWatchList makes the reflector stream its initial state with a
// sendInitialEvents watch instead of a list (falling back to a list).
func WithWatchList(on bool) InformerOption { return func(o *informerOptions) { o.useWatchList = on } }

// WithPageSize sets the list page size (negative: no pagination).
func WithPageSize(n int64) InformerOption { return func(o *informerOptions) { o.pageSize = n } }

// WithBackoff sets the reflector's retry backoff.
func WithBackoff(b wait.Backoff) InformerOption { return func(o *informerOptions) { o.backoff = b } }

// WithMinWatchTimeout sets the lower bound of the randomized watch timeout.
func WithMinWatchTimeout(d time.Duration) InformerOption {
	return func(o *informerOptions) { o.minWatchTimeout = d }
}

// WithWatchErrorHandler receives every list/watch error of the reflector,
// instead of DefaultWatchErrorHandler (which logs it).
func WithWatchErrorHandler(f func(error)) InformerOption {
	return func(o *informerOptions) { o.watchErrorHandler = f }
}
