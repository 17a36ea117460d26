package robustness

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// link is one process's connection to the cluster: a proxy in front of
// every member and a client of the three proxies. Killing a proxy is, to
// that process, the member's process dying (or its connections cut);
// freezing it is the member wedged with its connections open.
type link struct {
	proxies []*embedtest.Proxy // one per member
	client  *clientv3.Client
}

func newLink(ctx context.Context) (*link, error) {
	l := &link{}
	var eps []string
	for _, m := range cluster.Members {
		p, err := embedtest.StartProxy(m.ClientURL.String())
		if err != nil {
			l.close()
			return nil, err
		}
		l.proxies = append(l.proxies, p)
		eps = append(eps, p.Endpoint)
	}
	cli, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: eps, DialTimeout: 2 * time.Second,
		KeepAliveTime: time.Second, KeepAliveTimeout: time.Second})
	if err != nil {
		l.close()
		return nil, err
	}
	l.client = cli
	return l, nil
}

func (l *link) close() {
	if l.client != nil {
		l.client.Close()
	}
	for _, p := range l.proxies {
		p.Close()
	}
}

// replica is one cacher replica: its own link, etcd3 store and, while
// running, cacher. plant, when set, wraps what clients see (a planted bug).
type replica struct {
	id     int
	link   *link
	etcd   *etcd3.Store      // closed with the replica
	store  storage.Interface // what the cacher is fed from (etcd, or a planted wrapper of it)
	plant  func(storage.Interface) storage.Interface
	logger *slog.Logger

	mu      sync.Mutex
	serving storage.Interface // nil while stopped
	stop    func()
	started int // how many times it was started
}

// requestTimeout bounds each etcd round trip of a replica's store.
const requestTimeout = 2 * time.Second

func newReplica(ctx context.Context, id int, prefix string, logger *slog.Logger,
	wrapStore, plant func(storage.Interface) storage.Interface) (*replica, error) {
	l, err := newLink(ctx)
	if err != nil {
		return nil, err
	}
	s, err := etcd3.New(etcd3.Config{Client: l.client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: widget.KeyRoot,
		RequestTimeout: requestTimeout, Logger: logger})
	if err != nil {
		l.close()
		return nil, err
	}
	r := &replica{id: id, link: l, etcd: s, store: s, plant: plant, logger: logger}
	if wrapStore != nil {
		r.store = wrapStore(s)
	}
	return r, nil
}

// start builds a fresh cacher (an empty cache, as after a process restart)
// and runs it.
func (r *replica) start() error {
	c, err := cacher.New(cacher.Config{Storage: r.store, ResourcePrefix: widget.KeyRoot,
		NewFunc: widget.New, NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs,
		IndexLabels: []string{"grp"}, Logger: r.logger.With("replica", r.id),
		BookmarkInterval: time.Second, ConsistencyCheckInterval: 2 * time.Second})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var serving storage.Interface = c
	if r.plant != nil {
		serving = r.plant(c)
	}
	r.mu.Lock()
	r.serving, r.stop = serving, func() { cancel(); <-done }
	r.started++
	r.mu.Unlock()
	return nil
}

// kill stops the cacher; its watches end and its cache is gone.
func (r *replica) kill() {
	r.mu.Lock()
	stop := r.stop
	r.serving, r.stop = nil, nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// get returns what the replica serves, or nil while it is stopped.
func (r *replica) get() storage.Interface {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.serving
}

func (r *replica) close() {
	r.kill()
	r.etcd.Close()
	r.link.close()
}

func (r *replica) String() string { return fmt.Sprintf("replica %d", r.id) }
