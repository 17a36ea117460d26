package manager_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lwclient "github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/transport"
)

// requestCounter counts the reads (lists and watches) and the writes that
// reach next.
type requestCounter struct {
	next          http.Handler
	reads, writes atomic.Int32
}

func (c *requestCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		c.reads.Add(1)
	} else {
		c.writes.Add(1)
	}
	c.next.ServeHTTP(w, r)
}

// widgetServer serves the widgets of kinds over an etcd3 store under a
// fresh prefix, behind a requestCounter.
func widgetServer(t *testing.T, kinds *lwclient.Kinds) (*requestCounter, string) {
	t.Helper()
	kind, err := kinds.KindFor(&widget.Widget{})
	require.NoError(t, err)
	st, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.UnstructuredCodec, NewFunc: widget.NewUnstructured,
		NewListFunc: widget.NewUnstructuredList, Prefix: testPrefix(t), ResourcePrefix: kind.KeyRoot})
	require.NoError(t, err)
	srv, err := server.New(server.Config{Resources: []server.Resource{{Group: kind.GroupVersionKind.Group,
		Version: kind.GroupVersionKind.Version, Plural: kind.Resource, Kind: kind.GroupVersionKind.Kind, Namespaced: true,
		Storage: st, KeyRoot: kind.KeyRoot, GetAttrs: kind.GetAttrs}}})
	require.NoError(t, err)
	c := &requestCounter{next: srv}
	hs := httptest.NewServer(c)
	t.Cleanup(func() { hs.Close(); srv.Close(); st.Close() })
	return c, hs.URL
}

// TestHTTPBackendSharesRateLimit: over ServerURL, the manager's client and
// its cache's informers take their tokens from one bucket of
// Options.Burst: once the informer's list and watch and the client's
// writes have spent it, the next write fails at once with the typed
// error, and nothing more reaches the server.
func TestHTTPBackendSharesRateLimit(t *testing.T) {
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	counter, url := widgetServer(t, kinds)
	base := &http.Transport{}
	defer base.CloseIdleConnections()
	const burst = 3
	reg := prometheus.NewPedanticRegistry()
	m, err := manager.New(manager.Options{Name: "throttled", Kinds: kinds, ServerURL: url, Registerer: reg,
		HTTPClient: &http.Client{Transport: base}, QPS: 0.001, Burst: burst}) // a token every ~17 min
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- m.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-ran) }()

	callCtx, callCancel := context.WithTimeout(ctx, 30*time.Second)
	defer callCancel()
	c := m.GetClient()
	var list widget.WidgetList
	require.NoError(t, c.List(callCtx, &list), "the cache's informer lists (and watches)")
	var throttled error
	for i := range burst {
		if err := c.Create(callCtx, widget.NewWidget("default", fmt.Sprintf("w%d", i))); err != nil {
			throttled = err
			break
		}
	}
	require.ErrorIs(t, throttled, transport.ErrThrottled)
	var te *transport.ThrottleError
	require.ErrorAs(t, throttled, &te)
	assert.Equal(t, http.MethodPost, te.Method)
	require.NoError(t, callCtx.Err(), "it failed at once, not at the deadline")
	require.Eventually(t, func() bool { return counter.reads.Load()+counter.writes.Load() == burst },
		10*time.Second, time.Millisecond, "reads %d, writes %d", counter.reads.Load(), counter.writes.Load())
	assert.Positive(t, counter.reads.Load(), "the informer's requests counted")
	assert.Positive(t, counter.writes.Load(), "the client's requests counted")
	assert.Equal(t, 1.0, rejectedWrites(t, reg), "counted in the transport's metric")
}

// rejectedWrites is rest_client_rate_limiter_deadline_exceeded_total{verb="POST"} in reg.
func rejectedWrites(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "rest_client_rate_limiter_deadline_exceeded_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "verb" && l.GetValue() == http.MethodPost {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatal(`no rest_client_rate_limiter_deadline_exceeded_total{verb="POST"}`)
	return 0
}

// TestHTTPBackendOptions: QPS and Burst configure the transport the
// manager makes; with an HTTPClient whose transport is already a
// *transport.Transport they must stay 0; a negative Burst is invalid.
func TestHTTPBackendOptions(t *testing.T) {
	rt, err := transport.New(transport.Config{QPS: -1})
	require.NoError(t, err)
	for name, opts := range map[string]manager.Options{
		"limit twice":    {Name: "m", ServerURL: "http://127.0.0.1:1", HTTPClient: &http.Client{Transport: rt}, QPS: 5},
		"negative burst": {Name: "m", ServerURL: "http://127.0.0.1:1", Burst: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := manager.New(opts)
			require.ErrorIs(t, err, manager.ErrInvalidOptions)
		})
	}
	for _, qps := range []float32{-1, 0, 100} {
		t.Run(strconv.FormatFloat(float64(qps), 'f', -1, 32), func(t *testing.T) {
			_, err := manager.New(manager.Options{Name: "m", ServerURL: "http://127.0.0.1:1", QPS: qps})
			require.NoError(t, err)
		})
	}
	_, err = manager.New(manager.Options{Name: "m", ServerURL: "http://127.0.0.1:1", HTTPClient: &http.Client{Transport: rt}})
	require.NoError(t, err)
}
