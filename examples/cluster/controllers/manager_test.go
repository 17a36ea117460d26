package controllers

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	nodecontroller "github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/reflector"
)

// countingTransport counts, per resource (plural), the first lists of
// informers (resourceVersion=0: one per informer; a relist asks for a
// fresher one) and the watches of whole collections sent through it, and
// the watches still open.
type countingTransport struct {
	base http.RoundTripper

	mu                   sync.Mutex
	lists, watches, open map[string]int
}

func newCountingTransport() *countingTransport {
	return &countingTransport{base: &http.Transport{}, lists: map[string]int{}, watches: map[string]int{}, open: map[string]int{}}
}

// collection returns the plural of a collection path
// (/api/v1/pods, /apis/g/v1/namespaces/ns/leases), "" for any other.
func collection(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) > 0 && parts[0] == "api":
		parts = parts[2:] // api, v1
	case len(parts) > 2 && parts[0] == "apis":
		parts = parts[3:] // apis, group, version
	default:
		return ""
	}
	switch {
	case len(parts) == 1:
		return parts[0]
	case len(parts) == 3 && parts[0] == "namespaces":
		return parts[2]
	}
	return ""
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	res := collection(r.URL.Path)
	q := r.URL.Query()
	watch := q.Get("watch") == "true" || q.Get("watch") == "1"
	if r.Method != http.MethodGet || res == "" || (!watch && q.Get("resourceVersion") != "0") {
		return t.base.RoundTrip(r)
	}
	t.mu.Lock()
	if watch {
		t.watches[res]++
		t.open[res]++
	} else {
		t.lists[res]++
	}
	t.mu.Unlock()
	resp, err := t.base.RoundTrip(r)
	if watch && (err != nil || resp.StatusCode != http.StatusOK) {
		t.closed(res)
	} else if watch {
		resp.Body = &watchBody{ReadCloser: resp.Body, done: func() { t.closed(res) }}
	}
	return resp, err
}

func (t *countingTransport) closed(res string) {
	t.mu.Lock()
	t.open[res]--
	t.mu.Unlock()
}

// counts returns the first lists, watches and open watches of res.
func (t *countingTransport) counts(res string) (lists, watches, open int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lists[res], t.watches[res], t.open[res]
}

// watchBody reports when a watch's body is closed.
type watchBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *watchBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}

// TestReplicaWatchesEachKindOnce: a controller manager replica, whose
// node lifecycle controller and taint manager read nodes, pods and leases
// next to the workload controllers' pods, lists and watches each of those
// kinds once: one informer per kind, the manager cache's.
func TestReplicaWatchesEachKindOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prefix := embedtest.Prefix(t)
	for _, p := range []string{prefix, prefix + "-leader"} { // a previous run's objects and election
		_, err := etcdServer.Client.Delete(ctx, p, clientv3.WithPrefix())
		require.NoError(t, err)
	}
	a, err := api.StartAPIServer(ctx, api.ServerConfig{Client: etcdServer.Client, Prefix: prefix})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Close()) }()

	counting := newCountingTransport()
	hc := &http.Client{Transport: counting}
	defer hc.CloseIdleConnections()
	cm, err := NewControllerManager(ManagerConfig{API: api.NewClient(a.URL, hc), Etcd: etcdServer.Client,
		ElectionKey: prefix + "-leader", Identity: "replica-0", Workers: 1,
		Rates:  nodecontroller.Rates{Normal: 10, Secondary: 10, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55},
		Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cm.Run(runCtx)
	}()
	defer func() { stop(); <-done }()

	select {
	case <-cm.Manager.Elected():
	case <-ctx.Done():
		t.Fatal("the replica was not elected")
	}
	inf := cm.NodeInformers
	require.True(t, reflector.WaitForCacheSync(ctx, inf.Nodes.HasSynced, inf.Pods.HasSynced, inf.Leases.HasSynced))
	// Every informer has listed by now, and watches once it has. (The
	// manager may relist an informer while it waits for fresh caches
	// after the election: a relist replaces a watch, it adds none.)
	for _, res := range []string{"nodes", "pods", "leases"} {
		require.Eventually(t, func() bool {
			lists, _, open := counting.counts(res)
			return open >= 1 && open >= lists
		}, 10*time.Second, 5*time.Millisecond, "%s watched", res)
	}
	for _, res := range []string{"nodes", "pods", "leases"} {
		lists, _, open := counting.counts(res)
		require.Equal(t, 1, lists, "%s listed by one informer", res)
		require.Equal(t, 1, open, "one watch of %s open", res)
	}
}
