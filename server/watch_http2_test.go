package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
)

// h2cClient speaks only HTTP/2 over cleartext (prior knowledge), so all
// its requests share one connection.
func h2cClient(t *testing.T) *http.Client {
	t.Helper()
	p := &http.Protocols{}
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// getH2 sends a GET that must be answered 200 over HTTP/2.
func getH2(t *testing.T, ctx context.Context, c *http.Client, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, 2, resp.ProtoMajor, "answered over %s", resp.Proto)
	return resp
}

// TestH2CListAndWatch: Serve speaks HTTP/2 over cleartext; a client lists
// and watches over it.
func TestH2CListAndWatch(t *testing.T) {
	f, _ := newCacherFixture(t)
	base := "http://" + serveOn(t, f.srv)
	c := h2cClient(t)
	f.create("ns", "a", nil, "")

	ctx := testCtx(t)
	resp := getH2(t, ctx, c, base+apiBase+"/namespaces/ns/widgets")
	var list struct {
		Metadata struct{ ResourceVersion string }
		Items    []struct{ Metadata struct{ Name string } }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	require.Len(t, list.Items, 1)
	require.Equal(t, "a", list.Items[0].Metadata.Name)

	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	resp = getH2(t, wctx, c, base+apiBase+"/namespaces/ns/widgets?watch=true&resourceVersion="+list.Metadata.ResourceVersion)
	defer resp.Body.Close()
	f.create("ns", "b", nil, "")
	var ev wireEvent
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ev))
	require.Equal(t, "ADDED", ev.Type)
	require.Equal(t, "b", ev.object(t).GetName())
}

// TestTLSServesHTTP2: over TLS, Serve offers HTTP/2 by ALPN although
// Config.TLS names no protocols.
func TestTLSServesHTTP2(t *testing.T) {
	e := newAuthEnv(t)
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(e.serverPEM))
	tr := &http.Transport{ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	t.Cleanup(tr.CloseIdleConnections)
	resp := getH2(t, testCtx(t), &http.Client{Transport: tr}, e.url+"/livez")
	resp.Body.Close()
}

// TestHTTP2WatchesHoldOneGoroutineEach: watches multiplexed on one HTTP/2
// connection cost the server one goroutine each (the request's): the
// cacher's watchers give theirs up once they joined live dispatch.
func TestHTTP2WatchesHoldOneGoroutineEach(t *testing.T) {
	f, _ := newCacherFixtureWith(t, cacher.Config{})
	base := "http://" + serveOn(t, f.srv)
	c := h2cClient(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	// The connection and its goroutines are there before the count
	// starts.
	getH2(t, ctx, c, base+"/livez").Body.Close()
	before := serverGoroutines()

	const watches = 40
	for i := range watches {
		resp := getH2(t, ctx, c, fmt.Sprintf("%s%s/namespaces/ns%d/widgets?watch=true", base, apiBase, i))
		defer resp.Body.Close()
	}
	require.Equal(t, int64(watches), f.srv.activeWatches.Load())
	const slack = 3 // timers and the like, not per watch
	var extra int
	settled := assert.Eventually(t, func() bool {
		extra = serverGoroutines() - before
		return extra <= watches+slack
	}, 10*time.Second, 10*time.Millisecond)
	if !settled {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d watches hold %d more goroutines:\n%s", watches, extra, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d watches over one HTTP/2 connection: %d more goroutines", watches, extra)
}

// serverGoroutines counts this process's goroutines but those of net/http's
// client (the test's own side of the connections: an HTTP/2 client holds
// one per open request).
func serverGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "net/http.(*http2clientStream)") && !strings.Contains(g, "net/http.(*http2ClientConn)") &&
			!strings.Contains(g, "net/http.(*persistConn)") {
			count++
		}
	}
	return count
}

// TestIdleHTTP2WatchOutlivesSlowWatcherTimeout: an HTTP/2 watch that waits
// for events longer than SlowWatcherTimeout after a write stays open (an
// HTTP/2 write deadline resets its stream when it fires, written to or
// not, so the watch lifts it while idle).
func TestIdleHTTP2WatchOutlivesSlowWatcherTimeout(t *testing.T) {
	const slow = 100 * time.Millisecond
	f, _ := newCacherFixture(t, func(c *Config) { c.SlowWatcherTimeout = slow })
	base := "http://" + serveOn(t, f.srv)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	resp := getH2(t, ctx, h2cClient(t), base+apiBase+"/namespaces/ns/widgets?watch=true")
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for _, name := range []string{"a", "b"} {
		f.create("ns", name, nil, "")
		var ev wireEvent
		require.NoError(t, dec.Decode(&ev), "before %s", name)
		require.Equal(t, name, ev.object(t).GetName())
		time.Sleep(3 * slow) // idle past the write deadline: the passing time is what is tested
	}
}

// TestStalledHTTP2WatchIsEnded: over HTTP/2, a watch whose client stops
// reading (its stream's flow-control window stays full) is ended after
// SlowWatcherTimeout and counted as a slow watch, although HTTP/2 reports
// the reset stream's failed write without the deadline.
func TestStalledHTTP2WatchIsEnded(t *testing.T) {
	const slow = 300 * time.Millisecond
	reg := prometheus.NewRegistry()
	f, _ := newCacherFixture(t, func(c *Config) {
		c.SlowWatcherTimeout = slow
		c.Metrics = reg
	})
	base := "http://" + serveOn(t, f.srv)
	p := &http.Protocols{}
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p, HTTP2: &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10}}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	resp := getH2(t, ctx, &http.Client{Transport: tr}, base+apiBase+"/namespaces/ns/widgets?watch=true")
	defer resp.Body.Close() // never read
	pad := strings.Repeat("x", 200<<10)
	for i := range 2 { // more than the stream's window
		u := widget.NewUnstructuredWidget("ns", fmt.Sprintf("big-%d", i), nil)
		u.Object["spec"] = map[string]any{"data": pad}
		require.NoError(t, f.widgets.Create(ctx, "/widgets/ns/"+u.GetName(), u, nil, 0))
	}
	require.Eventually(t, func() bool { return f.srv.activeWatches.Load() == 0 }, 10*time.Second, 10*time.Millisecond)
	metrics := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	require.Contains(t, metrics, `listwatch_server_slow_watchers_ended_total{resource="widgets"} 1`)
}
