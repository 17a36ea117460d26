package server

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/server/auth"
)

// TestRequestTimeout: with etcd frozen, a get, a consistent list and a
// create answer 504 with a Timeout Status at RequestTimeout instead of
// waiting for etcd; a watch is not cut by RequestTimeout.
func TestRequestTimeout(t *testing.T) {
	st, proxy := newFreezableStore(t, "/widgets")
	f := newFixture(t, func(c *Config) {
		c.Resources[0].Storage = st
		c.RequestTimeout = 500 * time.Millisecond
	})
	f.create("ns", "a", nil, "")
	w := f.watch(apiBase + "/gadgets?watch=true")
	watchStart := time.Now()
	proxy.freeze()
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, apiBase + "/namespaces/ns/widgets/a"},
		{http.MethodGet, apiBase + "/namespaces/ns/widgets"},
		{http.MethodPost, apiBase + "/namespaces/ns/widgets"},
	} {
		start := time.Now()
		var body any
		if req.method == http.MethodPost {
			body = testWidget("ns", "b", nil, "")
		}
		r := f.do(req.method, req.path, "application/json", body)
		took := time.Since(start)
		r.status(t, http.StatusGatewayTimeout, metav1.StatusReasonTimeout)
		require.Less(t, took, 3*time.Second, "%s %s answered after %s", req.method, req.path, took)
	}
	// ?timeout= shortens the deadline (kubectl --request-timeout), never lengthens it.
	start := time.Now()
	r := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a?timeout=100ms", "", nil)
	r.status(t, http.StatusGatewayTimeout, metav1.StatusReasonTimeout)
	require.Less(t, time.Since(start), 400*time.Millisecond)
	start = time.Now()
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a?timeout=1h", "", nil).status(t, http.StatusGatewayTimeout, metav1.StatusReasonTimeout)
	require.Less(t, time.Since(start), 3*time.Second, "RequestTimeout caps ?timeout=")
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a?timeout=soon", "", nil).status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	proxy.thaw()
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a", "", nil).code)
	// The watch outlived several RequestTimeouts and still delivers.
	require.Greater(t, time.Since(watchStart), time.Second)
	r = f.do(http.MethodPost, apiBase+"/gadgets", "application/json",
		map[string]any{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}})
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.Equal(t, "ADDED", w.next().Type)
}

// TestBodyReadTimeout: a request body trickled slower than BodyReadTimeout
// allows is cut off, not waited for, with 408 and a plain message.
func TestBodyReadTimeout(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.BodyReadTimeout = 500 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.ts.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	start := time.Now()
	_, err = io.WriteString(conn, "POST "+apiBase+"/namespaces/ns/widgets HTTP/1.1\r\nHost: x\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	type answer struct {
		code int
		body string
		err  error
	}
	answered := make(chan answer, 1)
	go func() {
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		answered <- answer{resp.StatusCode, string(b), err}
	}()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-answered:
			require.Less(t, time.Since(start), 3*time.Second)
			require.NoError(t, a.err)
			// A timeout, not a bad request; no socket addresses.
			require.Equal(t, http.StatusRequestTimeout, a.code, a.body)
			require.NotContains(t, a.body, "127.0.0.1")
			return
		case <-tick.C:
			if time.Since(start) > 5*time.Second {
				t.Fatal("a body trickled one byte per 200 ms is still being read after 5 s")
			}
			_, _ = conn.Write([]byte(" ")) // JSON whitespace, one byte at a time
		}
	}
}

// TestConnectionsClose: an idle keep-alive connection is closed after
// IdleTimeout, and a connection whose request got 401 is closed at once.
func TestConnectionsClose(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	srv, err := New(Config{Resources: []Resource{widgets(newStore(t, "/widgets"))},
		Authenticator: tokens, IdleTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	addr := serveOn(t, srv)
	exchange := func(token string) (int, time.Duration) {
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /version HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+token+"\r\n\r\n")
		require.NoError(t, err)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answered := time.Now()
		_, err = br.ReadByte() // blocks until the server closes the connection
		require.ErrorIs(t, err, io.EOF, "the connection must be closed by the server, not by the test's deadline")
		return resp.StatusCode, time.Since(answered)
	}
	code, open := exchange("nope")
	require.Equal(t, http.StatusUnauthorized, code)
	require.Less(t, open, 200*time.Millisecond, "a connection after 401 is closed at once")
	code, open = exchange("alice-token")
	require.Equal(t, http.StatusOK, code)
	require.Less(t, open, 3*time.Second, "an idle connection is closed after IdleTimeout")
}
