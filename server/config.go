package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/filters"
	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// Defaults of Config fields left zero.
const (
	DefaultMaxRequestBodyBytes = 3 << 20
	// DefaultSlowWatcherTimeout is how long a watch's client may take
	// nothing of what waits for it (see Config.SlowWatcherTimeout).
	DefaultSlowWatcherTimeout = 5 * time.Second
	DefaultWriteTimeout       = 30 * time.Second
	DefaultMaxWatchTimeout    = 30 * time.Minute
	DefaultListenAddress      = "127.0.0.1:8080"
	// DefaultRequestTimeout bounds every request but watches, as
	// kube-apiserver's --request-timeout.
	DefaultRequestTimeout = 60 * time.Second
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultBodyReadTimeout bounds reading a request's body.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultIdleTimeout is how long a keep-alive connection may wait for
	// its next request (kube-apiserver's value).
	DefaultIdleTimeout = 90 * time.Second
	// DefaultMaxRequestsInFlight and DefaultMaxMutatingRequestsInFlight
	// are kube-apiserver's --max-requests-inflight and
	// --max-mutating-requests-inflight defaults.
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
	// WatchMemoryEstimate is what one idle watch costs the server, in
	// bytes, as make bench-scale-http measures it (heap and stack of the
	// server per HTTP/2 watch, rounded up): the unit of DefaultMaxWatches.
	WatchMemoryEstimate = 32 << 10
	// DefaultHealthCheckTimeout bounds each check of /readyz and /livez.
	DefaultHealthCheckTimeout = 2 * time.Second
)

// RequestLogLevel is the level of the per-request log lines (see
// filters.RequestLogLevel): a handler at slog.Level(-v) shows them from -v 2.
const RequestLogLevel = filters.RequestLogLevel

// PrinterColumn is one column of a resource's table output (see
// schema.PrinterColumn).
type PrinterColumn = schema.PrinterColumn

// Resource registers one API resource served over a storage.Interface.
type Resource struct {
	// Group is the API group, such as "demo.listwatch.dev". "" is the
	// legacy core group, served at /api/{version} (as Kubernetes serves
	// nodes and pods at /api/v1).
	Group string
	// Version is the API version, such as "v1". Required.
	Version string
	// Plural is the lower-case plural name used in paths, such as "widgets".
	// Required.
	Plural string
	// Singular is the singular name advertised by discovery; "" means
	// strings.ToLower(Kind).
	Singular string
	// ShortNames are the abbreviations discovery advertises, such as "no"
	// for nodes (kubectl get no).
	ShortNames []string
	// Kind is the object kind, such as "Widget"; lists are Kind+"List".
	// Required.
	Kind string
	// Namespaced makes the resource live in namespaces.
	Namespaced bool
	// Storage stores the objects. It must decode into
	// *unstructured.Unstructured and *unstructured.UnstructuredList (for
	// example an etcd3 store or cacher built with
	// unstructured.UnstructuredJSONScheme). Required.
	Storage storage.Interface
	// KeyRoot is the storage key every object lives under, such as
	// "/widgets": objects are at KeyRoot/namespace/name (namespaced) or
	// KeyRoot/name. Required; it must start with "/" and not end with "/".
	KeyRoot string
	// GetAttrs returns the label and field sets selectors match against;
	// nil means storage.DefaultAttrs (metadata.name, metadata.namespace).
	GetAttrs storage.AttrFunc
	// Schema is the OpenAPI v3 structural schema of the objects (as a CRD
	// carries it), without apiVersion, kind and metadata. It is published
	// at /openapi/v2 and /openapi/v3, every write is validated against it
	// (422 on violations), server-side apply merges by it, and fields it
	// does not declare are unknown to fieldValidation and dropped (nested
	// x-kubernetes-preserve-unknown-fields: true keeps them). New fails on
	// a schema that is not structural (one type per node, no $ref, ...).
	// nil: any fields are kept and only metadata is checked.
	Schema *spec.Schema
	// PrinterColumns are the columns of the resource's table output
	// (Accept: application/json;as=Table;g=meta.k8s.io;v=v1, what kubectl
	// get asks for), between NAME and AGE.
	PrinterColumns []PrinterColumn
	// SelectableFields names the field labels fieldSelector accepts besides
	// metadata.name and metadata.namespace (for example "spec.nodeName");
	// GetAttrs must return them.
	SelectableFields []string
	// Subresources declares /status and /scale, as a CRD does; nil: none.
	Subresources *Subresources
	// Validate, when set, checks every object a create, update, patch,
	// apply or scale is about to store, after its metadata and Schema: for
	// example by decoding it into the Go type its clients decode it into,
	// so that nothing is stored that their informers cannot read. An error
	// that is a Kubernetes status (apierrors) is answered as it is; any
	// other is 400 Bad Request `<Kind> in version "<version>" cannot be
	// handled as a <Kind>: <error>`, as kube-apiserver answers a body it
	// cannot decode.
	Validate func(u *unstructured.Unstructured) error
}

// GroupVersion returns the resource's group and version.
func (r *Resource) GroupVersion() k8sschema.GroupVersion {
	return k8sschema.GroupVersion{Group: r.Group, Version: r.Version}
}

func (r *Resource) validate() error {
	var errs []error
	if r.Group != "" && len(validation.IsDNS1123Subdomain(r.Group)) > 0 {
		errs = append(errs, fmt.Errorf("group %q must be a DNS-1123 subdomain", r.Group))
	}
	if r.Version == "" || len(validation.IsDNS1123Label(r.Version)) > 0 {
		errs = append(errs, fmt.Errorf("version %q must be a DNS-1123 label", r.Version))
	}
	if r.Plural == "" || len(validation.IsDNS1123Label(r.Plural)) > 0 || r.Plural == "namespaces" {
		errs = append(errs, fmt.Errorf("plural %q must be a DNS-1123 label other than \"namespaces\"", r.Plural))
	}
	if r.Kind == "" {
		errs = append(errs, errors.New("kind is required"))
	}
	if r.Storage == nil {
		errs = append(errs, errors.New("storage is required"))
	}
	if !strings.HasPrefix(r.KeyRoot, "/") || strings.HasSuffix(r.KeyRoot, "/") {
		errs = append(errs, fmt.Errorf("key root %q must start with \"/\" and not end with \"/\"", r.KeyRoot))
	}
	if err := schema.CheckPrinterColumns(r.PrinterColumns); err != nil {
		errs = append(errs, err)
	}
	if r.Subresources != nil {
		if err := r.Subresources.Scale.validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if r.Schema != nil {
		if err := schema.CheckStructural(r.Schema); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("resource %s/%s %s: %w", r.Group, r.Version, r.Plural, err)
	}
	return nil
}

// Config configures a Server. Zero values take the documented defaults.
type Config struct {
	// Resources are the resources served. At least one is required; two
	// resources may not share group, version and plural.
	Resources []Resource
	// Logger receives request failures (always, at Warn), watch
	// terminations, connection-limit episodes and, at RequestLogLevel, one
	// line per request (and one when a watch starts). nil means
	// slog.Default().
	Logger *slog.Logger
	// RequestTimeout bounds every request except watches (which keep
	// their timeoutSeconds, capped by MaxWatchTimeout): its context, the
	// one storage gets, ends then, and a request not answered by then gets
	// 504 with a Timeout Status. 0 means DefaultRequestTimeout (60 s).
	RequestTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers. 0 means
	// DefaultReadHeaderTimeout (10 s).
	ReadHeaderTimeout time.Duration
	// BodyReadTimeout bounds reading a request's body (at most
	// RequestTimeout); a client sending it slower is cut off. 0 means
	// DefaultBodyReadTimeout (30 s).
	BodyReadTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request. 0 means DefaultIdleTimeout (90 s).
	IdleTimeout time.Duration
	// MaxRequestsInFlight bounds the read-only requests (GET, HEAD) being
	// served at once, watches excepted; past it requests get 429 with
	// Retry-After: 1. 0 means DefaultMaxRequestsInFlight (400); negative
	// means no limit.
	MaxRequestsInFlight int
	// MaxMutatingRequestsInFlight is MaxRequestsInFlight for every other
	// method (create, update, patch, delete). 0 means
	// DefaultMaxMutatingRequestsInFlight (200); negative means no limit.
	MaxMutatingRequestsInFlight int
	// MaxWatches bounds the watch streams served at once, whoever opens
	// them; past it a watch is answered 429 Too Many Requests with
	// Retry-After: 1. One HTTP/2 connection carries hundreds of watches,
	// so connection limits do not bound them. 0 means DefaultMaxWatches();
	// negative means no limit.
	MaxWatches int
	// MaxWatchesPerUser bounds the watch streams one user (as the
	// Authenticator names them; system:anonymous for all anonymous
	// clients) has open at once, 429 past it. 0 means
	// DefaultMaxWatchesPerUser(MaxWatches); negative means no limit.
	MaxWatchesPerUser int
	// MaxConnections bounds the connections Serve holds open; past it the
	// listener stops accepting (new clients wait in the kernel's backlog)
	// and says so in the log, so that clients can never take the last file
	// descriptors of the process (and of an etcd embedded in it). 0 means
	// the RLIMIT_NOFILE soft limit minus a reserve of a quarter of it (at
	// least 256, at most half of it); negative means no limit.
	MaxConnections int
	// HTTP2MaxStreamsPerConnection bounds the requests (watches among
	// them) one HTTP/2 connection carries at once, as kube-apiserver's
	// --http2-max-streams-per-connection does. Serve speaks HTTP/2 over
	// TLS (ALPN "h2") and over cleartext (h2c, with prior knowledge) as
	// well as HTTP/1.1; over HTTP/2 many watches share one connection and
	// each costs only its request's goroutine. 0 means net/http's default
	// (250 in Go 1.26).
	HTTP2MaxStreamsPerConnection int
	// ReadyChecks are checks /readyz (and /healthz) run besides its own:
	// ping, etcd (a quorum read through the first resource's storage), each
	// resource's storage readiness and shutdown. A check named as a
	// built-in one replaces it. /livez never runs them: a replica cannot
	// cure its dependencies by restarting.
	ReadyChecks []HealthCheck
	// HealthCheckTimeout bounds each health check. 0 means
	// DefaultHealthCheckTimeout (2 s).
	HealthCheckTimeout time.Duration
	// MaxRequestBodyBytes bounds request bodies; larger bodies get 413.
	// 0 means DefaultMaxRequestBodyBytes (3 MiB).
	MaxRequestBodyBytes int64
	// SlowWatcherTimeout is the server's one slow-client policy for
	// watches: a watch whose client takes nothing for that long while
	// events wait for it (one write to its connection blocks that long) is
	// ended without an ERROR event, as Kubernetes ends a watcher too slow for its cache;
	// the client resumes from the last RV it decoded and loses nothing.
	// A client that lags but keeps reading is never ended: the cacher
	// serves it from its history. 0 means DefaultSlowWatcherTimeout (5 s).
	SlowWatcherTimeout time.Duration
	// WriteTimeout bounds each write of a list response to its
	// connection; a client that does not read for that long is
	// disconnected. Watches are bounded by SlowWatcherTimeout instead.
	// 0 means DefaultWriteTimeout.
	WriteTimeout time.Duration
	// MaxWatchTimeout caps timeoutSeconds; a watch that gives none lasts a
	// random time between MaxWatchTimeout/2 and MaxWatchTimeout, so that
	// reconnections spread out. 0 means DefaultMaxWatchTimeout.
	MaxWatchTimeout time.Duration
	// GitVersion is reported by /version; "" means the main module's
	// release version, or v0.1.0-dev+<commit> for an untagged build.
	GitVersion string
	// Metrics, when set, gets the server's request and watch metrics
	// (apiserver_request_total, apiserver_request_duration_seconds,
	// apiserver_longrunning_requests) and is served, with everything else
	// registered on it, at /metrics in Prometheus' text format. nil: no
	// /metrics.
	Metrics *prometheus.Registry
	// TLS, when set, makes Serve and ListenAndServe serve HTTPS with it.
	// For client certificates set ClientCAs and ClientAuth
	// tls.VerifyClientCertIfGiven, and auth.ClientCertAuthenticator in
	// Authenticator.
	TLS *tls.Config
	// Authenticator, when set, identifies the user of every request but
	// /livez, /readyz and /healthz (open to anyone, as kube-apiserver
	// lets anonymous users read them); a request it cannot identify gets
	// 401 Unauthorized. nil: no authentication, every request is served
	// as the anonymous user.
	Authenticator auth.Authenticator
	// AllowAnonymous serves requests that carry no credentials as the
	// user system:anonymous (group system:unauthenticated), for the
	// Authorizer to decide, instead of answering 401 (kube-apiserver's
	// --anonymous-auth). Wrong credentials are 401 either way.
	AllowAnonymous bool
	// Authorizer, when set, decides every authenticated request; a denied
	// one gets 403 Forbidden. nil allows everything (auth.ReadAllWriteGroups is
	// an example policy).
	Authorizer auth.Authorizer
	// AllowInsecureNonLoopback lets Serve serve on an address other than
	// loopback without TLS and an Authenticator, or with AllowAnonymous
	// and an Authorizer that lets anonymous users write, which it
	// otherwise refuses.
	AllowInsecureNonLoopback bool
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if len(out.Resources) == 0 {
		return out, errors.New("server: no resources configured")
	}
	seen := map[string]bool{}
	for i := range out.Resources {
		r := &out.Resources[i]
		if err := r.validate(); err != nil {
			return out, fmt.Errorf("server: %w", err)
		}
		id := r.Group + "/" + r.Version + "/" + r.Plural
		if seen[id] {
			return out, fmt.Errorf("server: resource %s registered twice", id)
		}
		seen[id] = true
	}
	if out.Logger == nil {
		out.Logger = slog.Default()
	}
	for i, c := range out.ReadyChecks {
		if c.Name == "" || strings.ContainsAny(c.Name, "/?") || c.Check == nil {
			return out, fmt.Errorf("server: ready check %d needs a name without / or ? and a Check function", i)
		}
	}
	out.RequestTimeout = orDefault(out.RequestTimeout, DefaultRequestTimeout)
	out.ReadHeaderTimeout = orDefault(out.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	out.BodyReadTimeout = min(orDefault(out.BodyReadTimeout, DefaultBodyReadTimeout), out.RequestTimeout)
	out.IdleTimeout = orDefault(out.IdleTimeout, DefaultIdleTimeout)
	out.HealthCheckTimeout = orDefault(out.HealthCheckTimeout, DefaultHealthCheckTimeout)
	if out.MaxRequestsInFlight == 0 {
		out.MaxRequestsInFlight = DefaultMaxRequestsInFlight
	}
	if out.MaxMutatingRequestsInFlight == 0 {
		out.MaxMutatingRequestsInFlight = DefaultMaxMutatingRequestsInFlight
	}
	if out.MaxWatches == 0 {
		out.MaxWatches = DefaultMaxWatches()
	}
	if out.MaxWatchesPerUser == 0 {
		out.MaxWatchesPerUser = DefaultMaxWatchesPerUser(out.MaxWatches)
	}
	if out.MaxRequestBodyBytes <= 0 {
		out.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if out.SlowWatcherTimeout <= 0 {
		out.SlowWatcherTimeout = DefaultSlowWatcherTimeout
	}
	if out.WriteTimeout <= 0 {
		out.WriteTimeout = DefaultWriteTimeout
	}
	if out.MaxWatchTimeout <= 0 {
		out.MaxWatchTimeout = DefaultMaxWatchTimeout
	}
	if out.GitVersion == "" {
		out.GitVersion = moduleVersion()
	}
	return out, nil
}

// DefaultMaxWatches is the watches a quarter of the memory the process
// may count on (filters.MemoryLimit: GOMEMLIMIT, the cgroup's limit or
// the machine's memory) holds at WatchMemoryEstimate each, at least 1,000
// and at most 1,000,000 (100,000 when the memory is unknown).
func DefaultMaxWatches() int {
	mem := filters.MemoryLimit()
	if mem == 0 {
		return 100_000
	}
	return int(min(max(mem/4/WatchMemoryEstimate, 1_000), 1_000_000))
}

// DefaultMaxWatchesPerUser is a tenth of maxWatches (at least 100): no one
// client can take the server's watches, while a controller manager's
// informers (tens of watches) and a busy kubectl stay well inside. It is 0
// (no limit) when maxWatches is negative.
func DefaultMaxWatchesPerUser(maxWatches int) int {
	if maxWatches < 0 {
		return -1
	}
	return max(maxWatches/10, 100)
}

// orDefault is d when v is not positive.
func orDefault(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// CacheCodec returns the codec for a cacher that stores the objects of r
// (cacher.Config.Codec): it keeps each object as the JSON this server writes
// for it, apiVersion and kind included, and names that format
// (storage.FormatNamer). The server then writes lists served from that
// cache by copying the cached bytes, with no decoding and no encoding per
// item, makes its watch events' lines from them, and the cache holds about
// the encoded size per object.
func CacheCodec(r Resource) *wire.Codec {
	return wire.NewCodec(wire.NewKind(r.GroupVersion().String(), r.Kind))
}
