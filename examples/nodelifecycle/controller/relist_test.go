package controller

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/storage"
)

// watchGone reports whether a watch from rv fails with 410 Gone, as an
// error or as the stream's first event.
func watchGone(ctx context.Context, lw *httplw.ListerWatcher, rv string) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, TimeoutSeconds: ptr(int64(1))})
	if err != nil {
		return errors.Is(err, storage.ErrGone)
	}
	defer w.Stop()
	e, ok := <-w.ResultChan()
	if !ok || e.Type != watch.Error {
		return false
	}
	st, isStatus := e.Object.(*metav1.Status)
	return isStatus && errors.Is(storage.FromStatus(st), storage.ErrGone)
}

func ptr[T any](v T) *T { return &v }

// probeHeader marks the test's own requests, which the cutter lets pass.
const probeHeader = "X-Test-Probe"

// probeTransport adds probeHeader to every request.
type probeTransport struct{ http.RoundTripper }

func (p probeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(probeHeader, "1")
	return p.RoundTripper.RoundTrip(r)
}

// cutter sits in front of the API server: while cut, every GET (the
// informers' lists and watches, not the test's probes) is refused and the watches in flight are
// ended; writes still pass.
type cutter struct {
	next http.Handler

	mu      sync.Mutex
	cut     bool
	cancels map[*http.Request]context.CancelFunc
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || r.Header.Get(probeHeader) != "" {
		c.next.ServeHTTP(w, r)
		return
	}
	c.mu.Lock()
	if c.cut {
		c.mu.Unlock()
		http.Error(w, "cut", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	c.cancels[r] = cancel
	c.mu.Unlock()
	defer func() { c.mu.Lock(); delete(c.cancels, r); c.mu.Unlock(); cancel() }()
	c.next.ServeHTTP(w, r.WithContext(ctx))
}

// set cuts or restores the informers' connections.
func (c *cutter) set(cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = cut
	if cut {
		for _, cancel := range c.cancels {
			cancel()
		}
	}
}

// TestInformerRelistAfter410: the informers lose their watches; meanwhile
// a node is added (one that never heartbeats) and written more often than
// the caches' history holds (8 events here), and etcd's history is
// compacted past the informers' resourceVersions. When they reconnect, resuming
// fails with 410 Gone, they relist, and the controller, which knows the
// new node only from that relist, marks it Unknown and taints it.
func TestInformerRelistAfter410(t *testing.T) {
	cut := &cutter{cancels: map[*http.Request]context.CancelFunc{}}
	var mu sync.Mutex
	var gone int
	c := startCluster(t, clusterOptions{zones: 1, nodesPerZone: 3,
		server: api.ServerConfig{Handler: func(h http.Handler) http.Handler { cut.next = h; return cut },
			Cacher: func(_ api.Kind, cfg *cacher.Config) { cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 8, 8 }},
		informerOpts: []reflector.InformerOption{reflector.WithWatchErrorHandler(func(err error) {
			if errors.Is(err, storage.ErrGone) {
				mu.Lock()
				gone++
				mu.Unlock()
			}
		})}})
	oldRV := c.inf.Nodes.LastSyncResourceVersion()
	cut.set(true)

	late := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-late", Labels: map[string]string{api.ZoneLabel: "zone-a"}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now()}}}}
	require.NoError(t, c.client.Create(c.ctx, api.Nodes, late))
	for i := range 20 { // more writes than the caches' history holds
		late.Labels["x"] = strconv.Itoa(i)
		require.NoError(t, c.client.Update(c.ctx, api.Nodes, late))
	}
	rev, err := strconv.ParseInt(late.ResourceVersion, 10, 64)
	require.NoError(t, err)
	require.NoError(t, etcdServer.Compact(c.ctx, rev))
	// Wait until the server answers 410 for the informers' old RV, so that
	// their reconnection cannot race the cacher noticing the compaction.
	probeTr := &http.Transport{}
	defer probeTr.CloseIdleConnections()
	lw, err := httplw.New(httplw.Config{BaseURL: c.api.URL, Version: "v1", Plural: "nodes",
		HTTPClient: &http.Client{Transport: probeTransport{probeTr}}})
	require.NoError(t, err)
	c.waitFor("the server to answer 410 for the old RV", func() bool { return watchGone(c.ctx, lw, oldRV) })
	cut.set(false)

	c.waitFor("node-late known, Unknown and tainted", func() bool {
		n, ok := c.inf.Nodes.GetIndexer().GetByKey("node-late")
		return ok && readyStatus(n) == corev1.ConditionUnknown && len(n.Spec.Taints) == 2
	})
	mu.Lock()
	defer mu.Unlock()
	require.Positive(t, gone, "the informers resumed with 410 and relisted")
}
