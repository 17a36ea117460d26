package manager

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/storage"
)

// Defaults of LeaderElection, those of client-go's leader election.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// DefaultFreshnessTimeout is Options.FreshnessTimeout's default: above the
// one-minute bookmark interval of Kubernetes' API server and of package
// cacher, which is how an informer over HTTP learns that a resource without
// writes is current.
const DefaultFreshnessTimeout = 90 * time.Second

// ErrInvalidOptions is returned by New for unusable Options.
var ErrInvalidOptions = errors.New("manager: invalid options")

// Options configures a Manager.
type Options struct {
	// Name identifies the manager in logs and in the leader-status
	// metric's name label. Required.
	Name string
	// Kinds are the kinds the manager's client and cache know (see
	// client.NewKinds). Nil means none: add them with GetKinds().Add.
	Kinds *client.Kinds
	// Etcd, when set, serves the objects in process: for each kind the
	// client or cache first uses, the manager makes an etcd3 store on this
	// client, a cacher over it (reads and watches) and a registry.Store
	// (writes), runs the cacher while Run runs, and closes them when Run
	// returns. It is also LeaderElection.Client's default. The manager does
	// not close it.
	Etcd *clientv3.Client
	// Storage gives the storage of some kinds instead of the one Etcd
	// would make (an etcd3 store or a cacher configured by the caller); the
	// manager writes to it through a registry.Store and owns it as its
	// own: it runs it while Run runs when it has Run(ctx) error (a cacher),
	// waits for WaitReady(ctx) error before starting the cache, and calls
	// Close() (an etcd3 store) when Run returns. With Storage and no Etcd,
	// only these kinds can be used.
	Storage map[schema.GroupVersionKind]storage.Interface
	// EtcdPrefix is put before every storage key the manager's stores use
	// in etcd (etcd3.Config.Prefix), to share one etcd between tenants.
	EtcdPrefix string
	// ServerURL, when set (and Etcd is not), serves the objects from a
	// Kubernetes-compatible HTTP server (`cacher-demo serve`, a Kubernetes
	// API server) through HTTPClient (nil: http.DefaultClient). The
	// manager's client and every informer's ListerWatcher send through one
	// transport.Transport, so they share one client-side rate limit, and a
	// list or write answered 429 is sent again after its Retry-After
	// (package transport).
	ServerURL  string
	HTTPClient *http.Client
	// QPS and Burst are that shared limit, as client-go's rest.Config has
	// them: QPS 0 means transport.DefaultQPS (5 a second), a negative QPS
	// no limit (controller-runtime's GetConfig sets -1); Burst 0 means
	// transport.DefaultBurst (10), a negative Burst is invalid. Each write,
	// each list page and each watch start takes one token; reads served
	// by the cache and watch events take none. When HTTPClient's transport
	// is already a *transport.Transport, that one (and its limit) is used,
	// and QPS and Burst must be 0.
	QPS   float32
	Burst int
	// InformerOptions configure the informers of the manager's cache
	// (resync, page size, watch-list, ...).
	InformerOptions []reflector.InformerOption
	// LeaderElection makes the leader-only Runnables run on one replica at
	// a time. Nil runs them at once, on every replica.
	LeaderElection *LeaderElection
	// FreshnessTimeout bounds each attempt of a newly elected replica (or,
	// without leader election, of Run) to bring its cache up to date
	// before the leader-only Runnables start: every informer of the cache
	// must have applied its resource's current revision, read with a
	// consistent list (see cache.Cache.WaitFresh). An attempt that runs
	// out is logged, counted (manager_cache_freshness_timeouts_total),
	// fails /readyz and is retried; the Runnables wait. Zero means
	// DefaultFreshnessTimeout (90 s).
	FreshnessTimeout time.Duration
	// Registerer receives the manager's metrics (the leader status, the
	// controllers' reconcile and work-queue metrics when they are made by
	// package builder, and over ServerURL the rate limit's and 429
	// retries' rest_client_* metrics of the transport it makes). Nil
	// records none.
	Registerer prometheus.Registerer
	// GarbageCollector runs a garbage collector (package gc) over the
	// kinds the manager serves, as a leader-only Runnable: it finishes the
	// deletes begun with a propagation policy (the dependents of an owner
	// deleted in the background or the foreground, the orphaning of those
	// of an owner deleted with Orphan) made through any client of the same
	// storage or server. Without it (and without another collector on that
	// storage) an owner deleted in the foreground or with Orphan stays,
	// marked for deletion, and dependents outlive their owners. It
	// watches every kind of Kinds (with Storage and no Etcd, the given
	// ones), so over ServerURL the server must serve them all: a kind
	// whose informer does not sync within 2 minutes stops the manager.
	GarbageCollector bool
	// Logger receives the manager's logs: start and stop of each stage,
	// failed Runnables, lost leadership. Nil means slog.Default().
	Logger *slog.Logger
}

// LeaderElection configures leader election on etcd (see the package doc
// for how it fences a deposed leader).
type LeaderElection struct {
	// Client is the etcd client the candidate's session and campaign use.
	// Nil means Options.Etcd (one of them is required). The manager does
	// not close it.
	Client *clientv3.Client
	// Key is the election's key prefix in etcd, shared by every replica
	// of one manager, e.g. "/leader/widget-controllers". Required.
	Key string
	// Identity is the value this candidate publishes under its election
	// key, for operators reading etcd. Empty means hostname_pid.
	Identity string
	// LeaseDuration is the TTL of the candidate's etcd lease: how long a
	// standby may wait after the leader's last renewal before it takes
	// over. It is rounded up to whole seconds, and etcd raises it to its
	// minimum TTL (2 s with the default 100 ms heartbeat). Zero means
	// DefaultLeaseDuration (15 s).
	LeaseDuration time.Duration
	// RenewDeadline is how long after sending its last successful renewal
	// the leader keeps running its controllers; it must be shorter than
	// LeaseDuration, and the difference is the time Reconciles have to
	// return once their ctx is cancelled. Zero means
	// DefaultRenewDeadline (10 s), or 2/3 of LeaseDuration when that is
	// not shorter than LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is how often the leader renews its lease. Zero means
	// DefaultRetryPeriod (2 s), or RenewDeadline/4 when that is not
	// shorter than RenewDeadline.
	RetryPeriod time.Duration
	// ReleaseOnCancel makes the leader revoke its lease when Run's ctx
	// ends (after its controllers stopped), so a standby takes over at
	// once. Without it the lease is left to expire.
	ReleaseOnCancel bool
}

// withDefaults validates le and fills in its defaults.
func (le LeaderElection) withDefaults() (LeaderElection, error) {
	switch {
	case le.Client == nil:
		return le, fmt.Errorf("%w: LeaderElection.Client is required", ErrInvalidOptions)
	case le.Key == "":
		return le, fmt.Errorf("%w: LeaderElection.Key is required", ErrInvalidOptions)
	case le.LeaseDuration < 0 || le.RenewDeadline < 0 || le.RetryPeriod < 0:
		return le, fmt.Errorf("%w: negative LeaderElection durations", ErrInvalidOptions)
	}
	if le.Identity == "" {
		host, _ := os.Hostname()
		le.Identity = host + "_" + strconv.Itoa(os.Getpid())
	}
	if le.LeaseDuration == 0 {
		le.LeaseDuration = DefaultLeaseDuration
	}
	le.LeaseDuration = time.Duration(math.Ceil(le.LeaseDuration.Seconds())) * time.Second
	if le.RenewDeadline == 0 {
		le.RenewDeadline = min(DefaultRenewDeadline, le.LeaseDuration*2/3)
	}
	if le.RetryPeriod == 0 {
		le.RetryPeriod = min(DefaultRetryPeriod, le.RenewDeadline/4)
	}
	switch {
	case le.RenewDeadline >= le.LeaseDuration:
		return le, fmt.Errorf("%w: RenewDeadline %v must be shorter than LeaseDuration %v", ErrInvalidOptions, le.RenewDeadline, le.LeaseDuration)
	case le.RetryPeriod >= le.RenewDeadline:
		return le, fmt.Errorf("%w: RetryPeriod %v must be shorter than RenewDeadline %v", ErrInvalidOptions, le.RetryPeriod, le.RenewDeadline)
	}
	return le, nil
}

// ttlSeconds is the lease TTL to ask etcd for.
func (le LeaderElection) ttlSeconds() int { return int(le.LeaseDuration / time.Second) }
