package client_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/transport"
)

// sheddingServer answers the first busy requests 429 with retryAfter and
// the others by echoing the request body back as 201; it records each
// body it received.
type sheddingServer struct {
	busy       int32
	retryAfter string
	calls      atomic.Int32
	mu         sync.Mutex
	bodies     []string
}

func (s *sheddingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.bodies = append(s.bodies, string(b))
	s.mu.Unlock()
	if s.calls.Add(1) <= s.busy {
		w.Header().Set("Retry-After", s.retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(b)
}

func newSheddingClient(t *testing.T, s *sheddingServer) client.Client {
	t.Helper()
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: hs.URL, Kinds: newKinds(t),
		HTTPClient: &http.Client{Transport: &http.Transport{}}})
	require.NoError(t, err)
	return c
}

// TestHTTPRetriesTooManyRequests: a Create answered 429 twice is sent
// again, with its body, after Retry-After, and succeeds.
func TestHTTPRetriesTooManyRequests(t *testing.T) {
	s := &sheddingServer{busy: 2, retryAfter: "0"}
	c := newSheddingClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w := widget.NewWidget("default", "w1")
	w.Spec.Color = "red"
	require.NoError(t, c.Create(ctx, w))
	assert.Equal(t, "red", w.Spec.Color)
	require.EqualValues(t, 3, s.calls.Load())
	var first map[string]any
	require.NoError(t, json.Unmarshal([]byte(s.bodies[0]), &first))
	assert.Equal(t, []string{s.bodies[0], s.bodies[0], s.bodies[0]}, s.bodies, "the body is sent each time")
}

// TestHTTPTooManyRequestsGivesUp: a server that always answers 429 gets
// the request DefaultTooManyRequestsRetries+1 times, then the client
// returns a typed 429 error.
func TestHTTPTooManyRequestsGivesUp(t *testing.T) {
	s := &sheddingServer{busy: 1 << 30, retryAfter: "0"}
	c := newSheddingClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Get(ctx, client.Key("default", "w1"), &widget.Widget{})
	require.Error(t, err)
	assert.True(t, client.IsTooManyRequests(err), "%v", err)
	assert.False(t, client.IsNotFound(err))
	assert.EqualValues(t, transport.DefaultTooManyRequestsRetries+1, s.calls.Load())
}

// TestHTTPTooManyRequestsWithinDeadline: a Retry-After that would outlast
// the request's deadline is not waited: the 429 comes back at once, as a
// typed error; without a deadline, the wait ends with the context.
func TestHTTPTooManyRequestsWithinDeadline(t *testing.T) {
	s := &sheddingServer{busy: 1 << 30, retryAfter: "5"}
	c := newSheddingClient(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := c.Get(ctx, client.Key("default", "w1"), &widget.Widget{})
	require.Error(t, err)
	assert.True(t, client.IsTooManyRequests(err), "%v", err)
	assert.NoError(t, ctx.Err(), "the 429 came back before the deadline")
	assert.EqualValues(t, 1, s.calls.Load())

	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		for s.calls.Load() < 2 {
			runtime.Gosched()
		}
		cancel()
	}()
	err = c.Get(ctx, client.Key("default", "w1"), &widget.Widget{})
	require.ErrorIs(t, err, context.Canceled)
	assert.EqualValues(t, 2, s.calls.Load(), "not sent again after the cancel")
}

// TestHTTPKeepsGivenTransport: NewHTTP keeps a *transport.Transport it is
// given (it does not wrap it in a second one, which would multiply the
// retries and the limits).
func TestHTTPKeepsGivenTransport(t *testing.T) {
	s := &sheddingServer{busy: 1 << 30, retryAfter: "0"}
	hs := httptest.NewServer(s)
	defer hs.Close()
	rt, err := transport.New(transport.Config{Base: &http.Transport{}, QPS: -1})
	require.NoError(t, err)
	hc := &http.Client{Transport: rt}
	defer hc.CloseIdleConnections()
	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: hs.URL, Kinds: newKinds(t), HTTPClient: hc})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.True(t, client.IsTooManyRequests(c.Get(ctx, client.Key("default", "w1"), &widget.Widget{})))
	assert.EqualValues(t, transport.DefaultTooManyRequestsRetries+1, s.calls.Load())
}
