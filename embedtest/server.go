package embedtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"

	"github.com/listwatch/listwatch/etcdrun"
)

// Options configure an embedded etcd member.
type Options struct {
	// Dir holds the data; "" means a new temporary directory removed on Close.
	Dir string
	// Logs turns on etcd's own logging (also on when LISTWATCH_ETCD_LOGS=1).
	Logs bool
	// Fsync keeps etcd's fsync on. Off by default: tests and benchmarks do
	// not need durability across power loss, and fsync dominates write time.
	Fsync bool
	// QuotaBackendBytes is the backend size quota; 0 means 8 GiB.
	QuotaBackendBytes int64
	// MaxRequestBytes is the largest request etcd accepts; 0 means etcd's
	// default (1.5 MiB).
	MaxRequestBytes uint
	// ClientURL is the client listen URL; "" means http://127.0.0.1:0 (a free port).
	ClientURL string
	// StartTimeout bounds start-up; 0 means 30 s.
	StartTimeout time.Duration
	// ClientTLS serves clients over mutual TLS only, with certificates
	// generated under the data directory (Server.TLS, Cluster.TLS); the
	// returned Client uses them.
	ClientTLS bool

	tls *TLSFiles // set when ClientTLS, before members are configured
}

// Server is one running embedded etcd member with a connected client.
type Server struct {
	// Etcd is the embedded server.
	Etcd *embed.Etcd
	// Client is connected to Endpoints.
	Client *clientv3.Client
	// Endpoints are the client URLs the server listens on.
	Endpoints []string
	// Dir is the data directory.
	Dir string
	// TLS are the certificate files with Options.ClientTLS (nil without).
	TLS *TLSFiles

	removeDir bool
	closeOnce sync.Once
}

// Start starts a single-member etcd for t, stopped by t.Cleanup.
func Start(tb testing.TB, opts ...Options) *Server {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Dir == "" {
		o.Dir = tb.TempDir()
	}
	s, err := StartServer(o)
	if err != nil {
		tb.Fatalf("embedtest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// MustStartServer is StartServer that panics on failure, for TestMain.
func MustStartServer(o Options) *Server {
	s, err := StartServer(o)
	if err != nil {
		panic(fmt.Sprintf("embedtest: %v", err))
	}
	return s
}

// StartServer starts a single-member etcd. The caller must Close it.
func StartServer(o Options) (*Server, error) {
	removeDir := false
	if o.Dir == "" {
		d, err := os.MkdirTemp("", "listwatch-etcd-")
		if err != nil {
			return nil, err
		}
		o.Dir, removeDir = d, true
	}
	if o.ClientTLS {
		f, err := writeTLSFiles(filepath.Join(o.Dir, "tls"))
		if err != nil {
			return nil, err
		}
		o.tls = f
	}
	cfg, err := memberConfig("default", filepath.Join(o.Dir, "member"), o)
	if err != nil {
		return nil, err
	}
	e, err := startEtcd(cfg, o)
	if err != nil {
		if removeDir {
			os.RemoveAll(o.Dir)
		}
		return nil, err
	}
	eps := etcdrun.ClientEndpoints(e)
	cli, err := newClientFor(eps, o.tls)
	if err != nil {
		e.Close()
		return nil, err
	}
	return &Server{Etcd: e, Client: cli, Endpoints: eps, Dir: o.Dir, TLS: o.tls, removeDir: removeDir}, nil
}

// Close stops the client and the server and removes a temporary data dir.
// It is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.Client.Close()
		s.Etcd.Close()
		<-s.Etcd.Server.StopNotify()
		if s.removeDir {
			os.RemoveAll(s.Dir)
		}
	})
}

// Compact compacts etcd's history up to rev and waits until it is applied.
func (s *Server) Compact(ctx context.Context, rev int64) error {
	return Compact(ctx, s.Client, rev)
}

// Compact compacts the history of the cluster behind cli up to rev, physically.
func Compact(ctx context.Context, cli *clientv3.Client, rev int64) error {
	_, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return err
}

// NewClient returns a client of endpoints built by etcdrun.Connect (its
// dial, keepalive and reconnect settings, quiet logs), once etcd answered.
func NewClient(endpoints []string) (*clientv3.Client, error) {
	return etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: endpoints})
}

func logsOn(o Options) bool {
	return o.Logs || os.Getenv("LISTWATCH_ETCD_LOGS") == "1"
}

// memberConfig returns an embed.Config for one member (etcdrun's, without
// fsync unless o.Fsync); peer and client ports are chosen by the kernel
// (port 0) unless given.
func memberConfig(name, dir string, o Options) (*embed.Config, error) {
	clientURL := o.ClientURL
	if clientURL == "" {
		clientURL = "http://127.0.0.1:0"
		if o.tls != nil {
			clientURL = "https://127.0.0.1:0"
		}
	}
	sc := etcdrun.ServerConfig{Name: name, Dir: dir, ClientURLs: []string{clientURL},
		PeerURLs: []string{"http://127.0.0.1:0"}, NoFsync: !o.Fsync,
		QuotaBackendBytes: o.QuotaBackendBytes, MaxRequestBytes: o.MaxRequestBytes}
	if o.tls != nil {
		sc.ClientTLS = o.tls.serverFiles()
	}
	if logsOn(o) {
		l, err := zap.NewDevelopment()
		if err != nil {
			return nil, err
		}
		sc.Logger = l
	}
	return sc.EmbedConfig()
}

func startEtcd(cfg *embed.Config, o Options) (*embed.Etcd, error) {
	return etcdrun.Start(cfg, o.StartTimeout)
}

// Prefix returns a key prefix unique to the test, such as "/TestFoo/sub/",
// so tests can share one etcd.
func Prefix(tb testing.TB) string {
	name := strings.NewReplacer(" ", "_", "#", "_").Replace(tb.Name())
	return "/" + name + "/"
}
