package embedtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

// Cluster is a three-member embedded etcd cluster with a client connected to
// every member.
type Cluster struct {
	// Client is connected to all members' endpoints.
	Client *clientv3.Client
	// Members are the cluster's members, in start order.
	Members []*Member
	// TLS are the certificate files with Options.ClientTLS (nil without).
	TLS *TLSFiles

	opts      Options
	dir       string
	removeDir bool
	closeOnce sync.Once
}

// Member is one member of a Cluster.
type Member struct {
	// Name is the member's name (m0, m1, m2).
	Name string
	// ClientURL and PeerURL are the member's listen/advertise URLs.
	ClientURL, PeerURL url.URL

	mu   sync.Mutex
	cfg  *embed.Config
	etcd *embed.Etcd
	id   string     // the member's ID (hex), known once started
	peer *peerProxy // in front of the peer port; the other members dial it
}

// StartCluster starts a three-member cluster for tb, stopped by tb.Cleanup.
func StartCluster(tb testing.TB, opts ...Options) *Cluster {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Dir == "" {
		o.Dir = tb.TempDir()
	}
	c, err := StartClusterServer(o)
	if err != nil {
		tb.Fatalf("embedtest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// StartClusterServer starts a three-member cluster; the caller must Close it.
// Ports are reserved from the kernel before start (the members must know
// each other's peer URLs); a start that loses a port race is retried.
func StartClusterServer(o Options) (*Cluster, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		c, err := startCluster(o, attempt)
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startCluster(o Options, attempt int) (*Cluster, error) {
	c := &Cluster{opts: o, dir: o.Dir}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "listwatch-etcd-cluster-")
		if err != nil {
			return nil, err
		}
		c.dir, c.removeDir = d, true
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	scheme := "http"
	if o.ClientTLS {
		f, err := writeTLSFiles(filepath.Join(c.dir, "tls"))
		if err != nil {
			return nil, err
		}
		o.tls, c.TLS, scheme = f, f, "https"
		c.opts = o
	}
	var initial []string
	for i := 0; i < 3; i++ {
		m := &Member{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: url.URL{Scheme: scheme, Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i])},
			PeerURL:   url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])},
		}
		c.Members = append(c.Members, m)
		p, err := startPeerProxy(m.PeerURL.Host)
		if err != nil {
			c.closeMembers()
			return nil, err
		}
		m.peer = p
		advertised := url.URL{Scheme: "http", Host: p.addr()}
		initial = append(initial, m.Name+"="+advertised.String())
	}
	token := fmt.Sprintf("listwatch-%d-%d", time.Now().UnixNano(), attempt)
	for _, m := range c.Members {
		cfg, err := memberConfig(m.Name, filepath.Join(c.dir, fmt.Sprintf("%s-%d", m.Name, attempt)), o)
		if err != nil {
			return nil, err
		}
		cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{m.ClientURL}, []url.URL{m.ClientURL}
		cfg.ListenPeerUrls = []url.URL{m.PeerURL}
		cfg.AdvertisePeerUrls = []url.URL{{Scheme: "http", Host: m.peer.addr()}}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = token
		m.cfg = cfg
	}
	// Members block in ReadyNotify until a quorum is up, so start them together.
	errs := make([]error, len(c.Members))
	var wg sync.WaitGroup
	for i, m := range c.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.start(o)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		c.closeMembers()
		return nil, err
	}
	cli, err := newClientFor(c.Endpoints(), c.TLS)
	if err != nil {
		c.closeMembers()
		return nil, err
	}
	c.Client = cli
	return c, nil
}

func (m *Member) start(o Options) error {
	e, err := startEtcd(m.cfg, o)
	if err != nil {
		return fmt.Errorf("member %s: %w", m.Name, err)
	}
	m.mu.Lock()
	m.etcd, m.id = e, e.Server.MemberID().String()
	m.mu.Unlock()
	return nil
}

// Etcd returns the member's running server, or nil when it is stopped.
func (m *Member) Etcd() *embed.Etcd {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.etcd
}

// Endpoints returns every member's client URL.
func (c *Cluster) Endpoints() []string {
	var eps []string
	for _, m := range c.Members {
		eps = append(eps, m.ClientURL.String())
	}
	return eps
}

// StopMember stops member i; its data stays for RestartMember.
func (c *Cluster) StopMember(i int) {
	m := c.Members[i]
	m.mu.Lock()
	e := m.etcd
	m.etcd = nil
	m.mu.Unlock()
	if e != nil {
		e.Close()
		<-e.Server.StopNotify()
	}
}

// RestartMember starts a stopped member i again with its data and ports.
func (c *Cluster) RestartMember(i int) error {
	m := c.Members[i]
	if m.Etcd() != nil {
		return fmt.Errorf("member %s is running", m.Name)
	}
	m.cfg.ClusterState = embed.ClusterStateFlagExisting
	return m.start(c.opts)
}

// Leader returns the index of the current leader among running members, or
// -1 when no running member knows one.
func (c *Cluster) Leader() int {
	for _, m := range c.Members {
		e := m.Etcd()
		if e == nil {
			continue
		}
		if lead := e.Server.Leader(); lead != 0 {
			for j, o := range c.Members {
				if oe := o.Etcd(); oe != nil && oe.Server.MemberID() == lead {
					return j
				}
			}
		}
	}
	return -1
}

// WaitLeader waits until the running members agree on a leader and returns its index.
func (c *Cluster) WaitLeader(ctx context.Context) (int, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if l := c.Leader(); l >= 0 {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-t.C:
		}
	}
}

// Partition cuts member i off its peers, as a network partition does:
// nothing passes between it and them either way (bytes are held, no
// connection is closed) until Heal, while its clients still reach it.
func (c *Cluster) Partition(i int) {
	c.Members[i].mu.Lock()
	id := c.Members[i].id
	c.Members[i].mu.Unlock()
	for j, m := range c.Members {
		if j == i {
			m.peer.setCut(func(string) bool { return true }) // everything to i
			continue
		}
		m.peer.setCut(func(sender string) bool { return sender == id }) // i to m
	}
}

// Heal ends a Partition.
func (c *Cluster) Heal() {
	for _, m := range c.Members {
		m.peer.setCut(nil)
	}
}

// Compact compacts the cluster's history up to rev.
func (c *Cluster) Compact(ctx context.Context, rev int64) error {
	return Compact(ctx, c.Client, rev)
}

// Close stops the client and every member and removes a temporary data dir.
func (c *Cluster) Close() {
	c.closeOnce.Do(func() {
		if c.Client != nil {
			c.Client.Close()
		}
		c.closeMembers()
		if c.removeDir {
			os.RemoveAll(c.dir)
		}
	})
}

func (c *Cluster) closeMembers() {
	var wg sync.WaitGroup
	for i := range c.Members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.StopMember(i)
		}()
	}
	wg.Wait()
	for _, m := range c.Members {
		if m.peer != nil {
			m.peer.close()
		}
	}
}

// freePorts reserves n distinct loopback ports below the kernel's
// ephemeral range and releases them; a later bind can still lose a race,
// which callers retry. A member keeps its ports across restarts, and a
// port from the ephemeral range (what a listen on port 0 returns) can be
// taken meanwhile as the local port of any outgoing connection of the
// machine, the peer proxies' among them: a restart then fails with
// "address already in use". Below the range only another listener can
// take it.
func freePorts(n int) ([]int, error) {
	low := ephemeralLow()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			return nil, fmt.Errorf("embedtest: no %d free ports below %d", n, low)
		}
		port := low - 1 - rand.IntN(low/2)
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken
		}
		ls = append(ls, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768 when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low < 2048 {
		return 32768
	}
	return low
}
