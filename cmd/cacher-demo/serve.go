package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "HTTP listen address")
	dataDir := fs.String("data-dir", "", "embedded etcd data directory (default: a temporary directory)")
	endpoints := fs.String("etcd-endpoints", "", "comma-separated URLs of an existing etcd cluster (no embedded etcd)")
	fs.StringVar(endpoints, "etcd-servers", "", "the same as --etcd-endpoints (kube-apiserver's name)")
	clientURL := fs.String("etcd-client-url", "", "client URL of the embedded etcd (default: a free loopback port)")
	encoded := fs.Bool("cache-encoded", true, "keep cached widgets as the JSON the server writes: lists copy it (no encoding per item), memory about the JSON size; false keeps decoded objects")
	requestTimeout := fs.Duration("request-timeout", server.DefaultRequestTimeout,
		"bound of every request but watches; past it the answer is 504 Timeout")
	slowWatcher := fs.Duration("slow-watcher-timeout", server.DefaultSlowWatcherTimeout,
		"a watch whose client takes nothing for this long while events wait for it is ended (the client resumes from its last RV)")
	maxInflight := fs.Int("max-requests-inflight", server.DefaultMaxRequestsInFlight,
		"read-only requests (watches excepted) served at once; past it 429 with Retry-After (0: no limit)")
	maxMutating := fs.Int("max-mutating-requests-inflight", server.DefaultMaxMutatingRequestsInFlight,
		"mutating requests served at once; past it 429 with Retry-After (0: no limit)")
	defaultWatches := server.DefaultMaxWatches()
	maxWatches := fs.Int("max-watches", defaultWatches,
		"watch streams served at once, whoever opens them; past it 429 with Retry-After (0: no limit; the default is what a quarter of the memory holds)")
	maxWatchesPerUser := fs.Int("max-watches-per-user", server.DefaultMaxWatchesPerUser(defaultWatches),
		"watch streams one user (system:anonymous for every anonymous client) has open at once; past it 429 (0: no limit)")
	h2Streams := fs.Int("http2-max-streams-per-connection", 0,
		"requests (watches among them) one HTTP/2 connection carries at once (0: net/http's default, 250)")
	collect := fs.Bool("garbage-collector", false,
		"run a garbage collector for the widgets served: deletes with a propagationPolicy (kubectl --cascade=foreground|orphan) complete, and widgets whose ownerReferences name only gone widgets are deleted")
	var sec secureFlags
	sec.register(fs)
	var logs logFlags
	logs.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *requestTimeout <= 0 || *slowWatcher <= 0 || *maxInflight < 0 || *maxMutating < 0 || *h2Streams < 0 ||
		*maxWatches < 0 || *maxWatchesPerUser < 0 {
		return fmt.Errorf("%w: --request-timeout and --slow-watcher-timeout must be positive, the in-flight and watch limits and --http2-max-streams-per-connection 0 or more", errUsage)
	}
	logger, err := logs.logger(stderr)
	if err != nil {
		return err
	}
	prev := slog.Default()
	slog.SetDefault(logger) // library logs (cacher, reflector, etcd store) follow the flags
	defer slog.SetDefault(prev)
	secure, caPath, err := sec.serverOptions(*listen)
	if err != nil {
		return err
	}
	var etcdHealth atomic.Pointer[etcd3.Health]
	options := func(c *server.Config) {
		secure(c)
		c.Logger = logger
		c.RequestTimeout = *requestTimeout
		c.SlowWatcherTimeout = *slowWatcher
		c.MaxRequestsInFlight = unlimitedIfZero(*maxInflight)
		c.MaxMutatingRequestsInFlight = unlimitedIfZero(*maxMutating)
		c.MaxWatches = unlimitedIfZero(*maxWatches)
		c.MaxWatchesPerUser = unlimitedIfZero(*maxWatchesPerUser)
		c.HTTP2MaxStreamsPerConnection = *h2Streams
		c.ReadyChecks = append(c.ReadyChecks, etcdReadyCheck(&etcdHealth))
	}
	etcdTLS, err := sec.etcdTLS()
	if err != nil {
		return err
	}
	if etcdTLS != nil && *endpoints == "" {
		return fmt.Errorf("%w: --etcd-cafile, --etcd-certfile and --etcd-keyfile go with --etcd-endpoints", errUsage)
	}
	cfg := stackConfig{listen: *listen, dataDir: *dataDir, etcdClientURL: *clientURL, serverOptions: options, etcdTLS: etcdTLS,
		cacheEncoded: *encoded, logger: logger}
	if *endpoints != "" {
		if *dataDir != "" || *clientURL != "" {
			return fmt.Errorf("%w: --etcd-endpoints excludes --data-dir and --etcd-client-url", errUsage)
		}
		for _, ep := range strings.Split(*endpoints, ",") {
			if u, err := url.Parse(ep); err != nil || u.Host == "" {
				return fmt.Errorf("%w: bad etcd endpoint %q", errUsage, ep)
			}
			cfg.etcdEndpoints = append(cfg.etcdEndpoints, ep)
		}
	}
	st, err := startStack(ctx, cfg)
	if err != nil {
		logger.Error("serve failed to start", "listen", *listen, "etcdEndpoints", cfg.etcdEndpoints, "err", err)
		return err
	}
	defer st.close()
	etcdHealth.Store(st.health)
	if *collect {
		stop, err := startCollector(st, logger)
		if err != nil {
			logger.Error("serve failed to start", "err", err)
			return err
		}
		defer stop()
		logger.Info("garbage collector started", "resource", plural+"."+group)
	}
	if st.etcd != nil {
		fmt.Fprintf(stdout, "embedded etcd: %s (data in %s)\n", st.etcd.Endpoints[0], st.etcd.Dir)
		logger.Info("etcd embedded", "endpoints", st.etcd.Endpoints, "dataDir", st.etcd.Dir)
	} else {
		fmt.Fprintf(stdout, "etcd: %s\n", strings.Join(cfg.etcdEndpoints, ","))
		logger.Info("etcd external", "endpoints", cfg.etcdEndpoints, "clientTLS", etcdTLS != nil)
	}
	logger.Info("serving", append([]any{"address", st.baseURL, "resource", plural + "." + group + "/" + version,
		"requestTimeout", requestTimeout.String(), "maxRequestsInflight", *maxInflight, "maxMutatingRequestsInflight", *maxMutating,
		"maxWatches", *maxWatches, "maxWatchesPerUser", *maxWatchesPerUser,
		"verbosity", logs.verbosity}, sec.describe()...)...)
	fmt.Fprintf(stdout, "serving %s/%s %s on %s\n", group, version, plural, st.baseURL)
	if caPath != "" {
		fmt.Fprintf(stdout, "clients trust %s (kubectl --certificate-authority=%s)\n", caPath, caPath)
	}
	fmt.Fprintf(stdout, "try: curl -N '%s/apis/%s/%s/namespaces/default/%s?watch=true&allowWatchBookmarks=true'\n",
		st.baseURL, group, version, plural)
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "shutting down")
		logger.Info("shutting down", "reason", context.Cause(ctx))
		return nil
	case err := <-st.serveDone:
		st.serveDone <- err // let close() see it
		logger.Error("http server stopped", "err", err)
		return fmt.Errorf("http server stopped: %v", err)
	}
}

// unlimitedIfZero maps a kube-apiserver style limit flag (0: no limit) to
// server.Config's convention (negative: no limit, 0: the default).
func unlimitedIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// etcdReadyCheck is /readyz's "etcd" check: the stack's etcd health
// (set once the stack has connected), which its background probe keeps
// current.
func etcdReadyCheck(h *atomic.Pointer[etcd3.Health]) server.HealthCheck {
	return server.HealthCheck{Name: "etcd", Check: func(ctx context.Context) error {
		health := h.Load()
		if health == nil {
			return errors.New("not connected to etcd yet")
		}
		return health.Check()
	}}
}
