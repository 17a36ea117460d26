package etcdrun

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// Defaults of ServerConfig's zero values.
const (
	DefaultClientURL         = "http://127.0.0.1:2379"
	DefaultPeerURL           = "http://127.0.0.1:2380"
	DefaultQuotaBackendBytes = 8 << 30
	DefaultStartTimeout      = 30 * time.Second
)

// ServerConfig configures one embedded etcd member. Every zero value means
// the documented default.
type ServerConfig struct {
	// Name is the member's name; "" means "default".
	Name string
	// Dir is the data directory (created if missing); "" means a new
	// temporary directory that Server.Close removes (StartServer only;
	// EmbedConfig requires a Dir).
	Dir string
	// ClientURLs are the URLs the member serves clients on (listen and
	// advertise); empty means DefaultClientURL, or its https form with
	// ClientTLS. Port 0 lets the kernel choose (Server.Endpoints tells).
	ClientURLs []string
	// PeerURLs are the member's peer URLs; empty means DefaultPeerURL.
	PeerURLs []string
	// InitialCluster is "name=peerURL,..." of every member; "" means a
	// cluster of this member alone.
	InitialCluster string
	// InitialClusterToken distinguishes clusters started from the same
	// configuration; "" means etcd's default.
	InitialClusterToken string
	// Existing joins an existing cluster (a restart of a member of it)
	// instead of bootstrapping a new one.
	Existing bool
	// ClientTLS serves clients over TLS with CertFile and KeyFile; with
	// CAFile, clients must present a certificate signed by it.
	ClientTLS *TLSFiles
	// PeerTLS does the same for peer traffic.
	PeerTLS *TLSFiles
	// NoFsync turns etcd's fsync off: faster writes, and data written in
	// the last moments before a power loss may be lost. Only for tests,
	// benchmarks and data that can be rebuilt.
	NoFsync bool
	// QuotaBackendBytes is the backend size quota; 0 means
	// DefaultQuotaBackendBytes (8 GiB).
	QuotaBackendBytes int64
	// MaxRequestBytes is the largest request etcd accepts; 0 means etcd's
	// default (1.5 MiB).
	MaxRequestBytes uint
	// Logger receives etcd's own logs; nil discards them.
	Logger *zap.Logger
	// StartTimeout bounds start-up; 0 means DefaultStartTimeout (30 s).
	StartTimeout time.Duration
}

// EmbedConfig returns the embed.Config of c, for callers that adjust
// more of etcd's settings before Start.
func (c ServerConfig) EmbedConfig() (*embed.Config, error) {
	if c.Dir == "" {
		return nil, errors.New("etcdrun: ServerConfig.Dir is required")
	}
	cfg := embed.NewConfig()
	cfg.Name = c.Name
	if cfg.Name == "" {
		cfg.Name = "default"
	}
	cfg.Dir = c.Dir
	clientURLs := c.ClientURLs
	if len(clientURLs) == 0 {
		clientURLs = []string{DefaultClientURL}
		if c.ClientTLS != nil {
			clientURLs = []string{"https://127.0.0.1:2379"}
		}
	}
	peerURLs := c.PeerURLs
	if len(peerURLs) == 0 {
		peerURLs = []string{DefaultPeerURL}
	}
	cus, err := parseURLs("client", clientURLs)
	if err != nil {
		return nil, err
	}
	pus, err := parseURLs("peer", peerURLs)
	if err != nil {
		return nil, err
	}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = cus, cus
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = pus, pus
	if c.ClientTLS != nil {
		cfg.ClientTLSInfo = c.ClientTLS.serverInfo()
	}
	if c.PeerTLS != nil {
		cfg.PeerTLSInfo = c.PeerTLS.serverInfo()
	}
	cfg.InitialCluster = c.InitialCluster
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	}
	if c.InitialClusterToken != "" {
		cfg.InitialClusterToken = c.InitialClusterToken
	}
	if c.Existing {
		cfg.ClusterState = embed.ClusterStateFlagExisting
	}
	cfg.UnsafeNoFsync = c.NoFsync
	cfg.QuotaBackendBytes = c.QuotaBackendBytes
	if cfg.QuotaBackendBytes == 0 {
		cfg.QuotaBackendBytes = DefaultQuotaBackendBytes
	}
	if c.MaxRequestBytes > 0 {
		cfg.MaxRequestBytes = c.MaxRequestBytes
	}
	logger := c.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(logger)
	return cfg, nil
}

func parseURLs(what string, raw []string) ([]url.URL, error) {
	us := make([]url.URL, 0, len(raw))
	for _, r := range raw {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("etcdrun: %s URL %q: %w", what, r, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("etcdrun: %s URL %q: want http(s)://host:port", what, r)
		}
		us = append(us, *u)
	}
	return us, nil
}

// Server is a running embedded etcd member.
type Server struct {
	// Etcd is the embedded server.
	Etcd *embed.Etcd
	// Endpoints are the client URLs it listens on, with the ports the
	// kernel chose.
	Endpoints []string
	// Dir is the data directory.
	Dir string

	removeDir bool // Dir is temporary
	closeOnce sync.Once
}

// StartServer starts the member c describes and waits until it serves,
// or fails, or StartTimeout passes. The caller must Close it.
func StartServer(c ServerConfig) (*Server, error) {
	removeDir := false
	if c.Dir == "" {
		d, err := os.MkdirTemp("", "etcdrun-")
		if err != nil {
			return nil, fmt.Errorf("etcdrun: temporary data directory: %w", err)
		}
		c.Dir, removeDir = d, true
	}
	cfg, err := c.EmbedConfig()
	if err == nil {
		var e *embed.Etcd
		if e, err = Start(cfg, c.StartTimeout); err == nil {
			return &Server{Etcd: e, Endpoints: ClientEndpoints(e), Dir: c.Dir, removeDir: removeDir}, nil
		}
	}
	if removeDir {
		os.RemoveAll(c.Dir)
	}
	return nil, err
}

// Start starts etcd with cfg and waits until it is ready to serve, fails,
// or timeout (0: DefaultStartTimeout) passes; then it stops etcd again.
func Start(cfg *embed.Config, timeout time.Duration) (*embed.Etcd, error) {
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcdrun: starting etcd %s in %s: %w", cfg.Name, cfg.Dir, err)
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcdrun: etcd %s failed: %w", cfg.Name, err)
	case <-t.C:
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("etcdrun: etcd %s was not ready within %v", cfg.Name, timeout)
	}
}

// ClientEndpoints returns the client URLs e listens on.
func ClientEndpoints(e *embed.Etcd) []string {
	secure := !e.Config().ClientTLSInfo.Empty()
	scheme := "http://"
	if secure {
		scheme = "https://"
	}
	eps := make([]string, 0, len(e.Clients))
	for _, c := range e.Clients {
		eps = append(eps, scheme+c.Addr().String())
	}
	return eps
}

// Close stops the member, waits until it has stopped and removes a
// temporary data directory. It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.Etcd.Close()
		<-s.Etcd.Server.StopNotify()
		if s.removeDir {
			os.RemoveAll(s.Dir)
		}
	})
}
