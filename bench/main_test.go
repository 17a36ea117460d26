package bench

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// The shared fixture: one embedded etcd, the workload's N objects, the etcd3
// store over them and a cacher over that store. It is built on first use, so
// that `go test ./bench` (no benchmarks) starts nothing.
var (
	fixtureOnce sync.Once
	shared      *fixture
	fixtureErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const (
	etcdPrefix     = "/bench/"
	resourcePrefix = "/widgets"
)

// fixture is what every benchmark runs against.
type fixture struct {
	srv      *embedtest.Server
	n        int
	meanSize float64 // mean encoded object size, bytes
	loader   Loader
	store    *etcd3.Store
	// etcd is the etcd3 store, counted.
	etcd *counting.Storage
	// cacheBackend counts what the shared cacher asks the etcd3 store.
	cacheBackend *counting.Storage
	// cache is the shared cacher; nil when no cacher is available.
	cache     storage.Interface
	stopCache func()
}

func getFixture(b *testing.B) *fixture {
	b.Helper()
	fixtureOnce.Do(func() { shared, fixtureErr = newFixture() })
	if fixtureErr != nil {
		b.Fatal(fixtureErr)
	}
	return shared
}

func newFixture() (*fixture, error) {
	n, err := N()
	if err != nil {
		return nil, err
	}
	srv, err := embedtest.StartServer(embedtest.Options{QuotaBackendBytes: 8 << 30})
	if err != nil {
		return nil, err
	}
	f := &fixture{srv: srv, n: n}
	f.store, err = newEtcd3(srv)
	if err != nil {
		f.close()
		return nil, err
	}
	f.etcd = counting.New(f.store)
	f.loader = Loader{Client: srv.Client, Codec: widget.Codec, Key: func(i int) string {
		return etcdPrefix + "widgets/" + Namespace + "/" + Name(i)
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if f.meanSize, _, err = f.loader.Load(ctx, n); err != nil {
		f.close()
		return nil, err
	}
	f.cacheBackend = counting.New(f.store)
	f.cache, f.stopCache, err = newCache(ctx, f.cacheBackend)
	if err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func newEtcd3(srv *embedtest.Server) (*etcd3.Store, error) {
	return etcd3.New(etcd3.Config{
		Client:         srv.Client,
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		NewListFunc:    widget.NewList,
		Prefix:         etcdPrefix,
		ResourcePrefix: resourcePrefix,
	})
}

func (f *fixture) close() {
	if f.stopCache != nil {
		f.stopCache()
	}
	if f.store != nil {
		f.store.Close()
	}
	f.srv.Close()
}

// source is a store under measurement.
type source struct {
	name string
	s    storage.Interface
	// backend counts the requests that reach the etcd3 store.
	backend *counting.Storage
	// streams is the number of etcd watch streams the source holds open
	// besides those counted during a run (the cacher's own watch).
	streams int64
}

// sources returns the etcd3 store and, when available, the cacher.
func (f *fixture) sources() []source {
	out := []source{{name: "etcd", s: f.etcd, backend: f.etcd}}
	if f.cache != nil {
		out = append(out, source{name: "cache", s: f.cache, backend: f.cacheBackend, streams: 1})
	}
	return out
}

// currentRV is etcd's current revision as an RV.
func (f *fixture) currentRV(b *testing.B) storage.RV {
	b.Helper()
	rv, err := f.store.GetCurrentResourceVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return storage.RVAt(rv)
}
