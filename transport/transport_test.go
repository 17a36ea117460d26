package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	testingclock "k8s.io/utils/clock/testing"
)

// counter is a server that counts requests and answers the first busy
// ones 429 with retryAfter, the others 200.
type counter struct {
	calls      atomic.Int32
	busy       int32
	retryAfter string
}

func (c *counter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if c.calls.Add(1) <= c.busy {
		w.Header().Set("Retry-After", c.retryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	_, _ = io.WriteString(w, "ok")
}

// rig is a Transport on a fake clock in front of a counter.
type rig struct {
	srv   *counter
	url   string
	clock *testingclock.FakeClock
	rt    *Transport
	hc    *http.Client
}

func newRig(t *testing.T, cfg Config, srv *counter) *rig {
	t.Helper()
	hs := httptest.NewServer(srv)
	base := &http.Transport{}
	t.Cleanup(func() { base.CloseIdleConnections(); hs.Close() })
	cfg.Base = base
	clk := testingclock.NewFakeClock(time.Now())
	rt, err := newTransport(cfg, clk)
	require.NoError(t, err)
	return &rig{srv: srv, url: hs.URL, clock: clk, rt: rt, hc: &http.Client{Transport: rt}}
}

// deadline returns a context whose deadline is d from now on the rig's fake
// clock, which the transport decides by, and which real time never ends:
// a context.WithDeadline at a fake instant would expire in real time while
// a loaded machine runs the test, and the transport rightly answers an
// ended context with its error before anything else.
func (r *rig) deadline(d time.Duration) context.Context {
	return fakeDeadline{Context: context.Background(), at: r.clock.Now().Add(d)}
}

// fakeDeadline reports at as its deadline and is never done.
type fakeDeadline struct {
	context.Context
	at time.Time
}

func (c fakeDeadline) Deadline() (time.Time, bool) { return c.at, true }

// get sends a GET of path with ctx and returns the status code.
func (r *rig) get(ctx context.Context, path string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// async sends get in a goroutine; the channel gets its error.
func (r *rig) async(ctx context.Context, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r.get(ctx, path)
		done <- err
	}()
	return done
}

// waitTimer waits until some request waits on the fake clock.
func (r *rig) waitTimer(t *testing.T) {
	t.Helper()
	require.Eventually(t, r.clock.HasWaiters, 10*time.Second, time.Millisecond)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestRateLimit: Burst requests go at once, the next waits for the
// bucket's refill (1/QPS of the fake clock), and not a moment less.
func TestRateLimit(t *testing.T) {
	r := newRig(t, Config{QPS: 1, Burst: 2}, &counter{})
	ctx := testCtx(t)
	for range 2 {
		code, err := r.get(ctx, "/")
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, code)
	}
	done := r.async(ctx, "/")
	r.waitTimer(t)
	assert.EqualValues(t, 2, r.srv.calls.Load(), "the third request waits")
	r.clock.Step(999 * time.Millisecond)
	assert.True(t, r.clock.HasWaiters(), "not sent before its token")
	assert.EqualValues(t, 2, r.srv.calls.Load())
	r.clock.Step(time.Millisecond)
	require.NoError(t, <-done)
	assert.EqualValues(t, 3, r.srv.calls.Load())
}

// TestRateLimitDeadline: a request whose token would come after its
// deadline fails at once with a *ThrottleError, and gives its turn back:
// the next request waits no longer than it would have.
func TestRateLimitDeadline(t *testing.T) {
	r := newRig(t, Config{QPS: 1, Burst: 1}, &counter{})
	_, err := r.get(testCtx(t), "/")
	require.NoError(t, err)

	short := r.deadline(500 * time.Millisecond)
	_, err = r.get(short, "/")
	require.ErrorIs(t, err, ErrThrottled)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var te *ThrottleError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, time.Second, te.Wait)
	assert.Equal(t, http.MethodGet, te.Method)
	assert.False(t, r.clock.HasWaiters(), "it did not wait")
	assert.EqualValues(t, 1, r.srv.calls.Load())

	done := r.async(testCtx(t), "/")
	r.waitTimer(t)
	r.clock.Step(time.Second) // the turn the failed request gave back
	require.NoError(t, <-done)
	assert.EqualValues(t, 2, r.srv.calls.Load())
}

// TestRateLimitCancel: a context ended during the wait ends it with the
// context's error.
func TestRateLimitCancel(t *testing.T) {
	r := newRig(t, Config{QPS: 1, Burst: 1}, &counter{})
	_, err := r.get(testCtx(t), "/")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := r.async(ctx, "/")
	r.waitTimer(t)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.EqualValues(t, 1, r.srv.calls.Load())
}

// TestNoLimit: a negative QPS turns the limit off.
func TestNoLimit(t *testing.T) {
	r := newRig(t, Config{QPS: -1}, &counter{})
	assert.False(t, r.rt.Limited())
	ctx := testCtx(t)
	for range 3 * DefaultBurst {
		_, err := r.get(ctx, "/")
		require.NoError(t, err)
	}
	assert.EqualValues(t, 3*DefaultBurst, r.srv.calls.Load())
}

// TestConfig: the zero Config takes client-go's defaults; a negative Burst
// is refused.
func TestConfig(t *testing.T) {
	rt, err := New(Config{})
	require.NoError(t, err)
	require.True(t, rt.Limited())
	assert.EqualValues(t, DefaultQPS, rt.limiter.Limit())
	assert.Equal(t, DefaultBurst, rt.limiter.Burst())
	_, err = New(Config{Burst: -1})
	require.Error(t, err)

	hc := &http.Client{Transport: rt}
	assert.Same(t, hc, Wrap(hc), "a Transport is kept")
	plain := &http.Client{Timeout: time.Minute}
	w := Wrap(plain)
	assert.NotSame(t, plain, w)
	assert.Nil(t, plain.Transport, "the given client is not changed")
	assert.Equal(t, time.Minute, w.Timeout)
	assert.IsType(t, &Transport{}, w.Transport)
}

// TestTooManyRequests: a 429 is sent again after its Retry-After (on the
// fake clock), taking a token each time.
func TestTooManyRequests(t *testing.T) {
	r := newRig(t, Config{QPS: 1, Burst: 2}, &counter{busy: 2, retryAfter: "3"})
	done := r.async(testCtx(t), "/")
	r.waitTimer(t) // Retry-After of the first 429
	assert.EqualValues(t, 1, r.srv.calls.Load())
	r.clock.Step(3 * time.Second)
	r.waitTimer(t) // Retry-After of the second
	assert.EqualValues(t, 2, r.srv.calls.Load())
	r.clock.Step(3 * time.Second) // and the bucket refilled meanwhile
	require.NoError(t, <-done)
	assert.EqualValues(t, 3, r.srv.calls.Load())
}

// TestTooManyRequestsPastDeadline: a Retry-After that would outlast the
// deadline returns the 429 at once.
func TestTooManyRequestsPastDeadline(t *testing.T) {
	r := newRig(t, Config{QPS: -1}, &counter{busy: 1 << 30, retryAfter: "5"})
	ctx := r.deadline(4 * time.Second)
	code, err := r.get(ctx, "/")
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.EqualValues(t, 1, r.srv.calls.Load())
}

// TestWatchTooManyRequests: a watch's 429 is returned as it is (the
// reflector backs off), after one token.
func TestWatchTooManyRequests(t *testing.T) {
	r := newRig(t, Config{QPS: 1, Burst: 1}, &counter{busy: 1 << 30, retryAfter: "0"})
	code, err := r.get(testCtx(t), "/?watch=true")
	require.NoError(t, err)
	assert.Equal(t, http.StatusTooManyRequests, code)
	assert.EqualValues(t, 1, r.srv.calls.Load())
	short := r.deadline(time.Millisecond)
	_, err = r.get(short, "/")
	require.ErrorIs(t, err, ErrThrottled, "the watch took the token")
}

// TestTooManyRequestsBody: a POST is sent again with its body.
func TestTooManyRequestsBody(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	c := &counter{busy: 1, retryAfter: "0"}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		c.ServeHTTP(w, req)
	}))
	defer hs.Close()
	rt, err := New(Config{QPS: -1, Base: &http.Transport{}})
	require.NoError(t, err)
	hc := &http.Client{Transport: rt}
	defer hc.CloseIdleConnections()
	resp, err := hc.Post(hs.URL, "text/plain", strings.NewReader("payload"))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"payload", "payload"}, bodies)
}

// TestLongWaitLogged: a wait past LongWaitWarn is logged at Info level,
// the next ones within LongWaitLogEvery at Debug level.
func TestLongWaitLogged(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := newRig(t, Config{QPS: 0.5, Burst: 1, Logger: log}, &counter{})
	ctx := testCtx(t)
	_, err := r.get(ctx, "/")
	require.NoError(t, err)
	for range 2 {
		done := r.async(ctx, "/")
		r.waitTimer(t)
		r.clock.Step(2 * time.Second)
		require.NoError(t, <-done)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 2, buf.String())
	assert.Contains(t, lines[0], "level=INFO")
	assert.Contains(t, lines[0], `msg="waited before sending request" delay=2s reason="client-side throttling" method=GET`)
	assert.Contains(t, lines[1], "level=DEBUG")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRetryAfter: seconds and HTTP dates are read (uncapped); anything
// else is no answer; retryWait caps it and waits 1 s without one.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":     -1,
		"junk": -1,
		"-3":   -1,
		"0":    0,
		"2":    2 * time.Second,
		"3600": time.Hour,
		now.Add(3 * time.Second).Format(http.TimeFormat):  3 * time.Second,
		now.Add(-3 * time.Second).Format(http.TimeFormat): 0,
	} {
		resp := &http.Response{Header: http.Header{"Retry-After": {h}}}
		got, ok := RetryAfter(resp, now)
		if want < 0 {
			assert.False(t, ok, "Retry-After %q", h)
			assert.Equal(t, time.Second, retryWait(resp, now))
			continue
		}
		assert.True(t, ok, "Retry-After %q", h)
		assert.Equal(t, want, got, "Retry-After %q", h)
		assert.Equal(t, min(want, MaxRetryAfter), retryWait(resp, now), fmt.Sprintf("Retry-After %q", h))
	}
}

// TestMetrics: every token wait is observed (0 included), a ThrottleError
// and a 429 sent again are counted, by verb; a second Transport on the
// same registry shares the collectors.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	r := newRig(t, Config{QPS: 1, Burst: 1, Registerer: reg}, &counter{busy: 1, retryAfter: "0"})
	ctx := testCtx(t)
	done := r.async(ctx, "/") // 429, then a wait of 1 s for the retry's token
	r.waitTimer(t)
	r.clock.Step(time.Second)
	require.NoError(t, <-done)
	short := r.deadline(time.Millisecond)
	_, err := r.get(short, "/?watch=true")
	require.ErrorIs(t, err, ErrThrottled)

	_, err = New(Config{Registerer: reg})
	require.NoError(t, err, "a second Transport on the registry")
	assert.Equal(t, 1.0, sample(t, reg, "rest_client_request_retries_total", "code", "429", "verb", "GET"))
	assert.Equal(t, 1.0, sample(t, reg, "rest_client_rate_limiter_deadline_exceeded_total", "verb", "WATCH"))
	assert.Equal(t, 2.0, sample(t, reg, "rest_client_rate_limiter_duration_seconds", "verb", "GET"), "waits of 0 and 1 s")
	assert.Equal(t, 1.0, sample(t, reg, "rest_client_rate_limiter_duration_seconds_sum", "verb", "GET"))
}

// sample returns the value of the counter (or the count of the histogram,
// or its sum with the suffix _sum) name with the label pairs kv in reg.
func sample(t *testing.T, reg *prometheus.Registry, name string, kv ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	family, sum := name, false
	if f, ok := strings.CutSuffix(name, "_sum"); ok {
		family, sum = f, true
	}
	for _, mf := range mfs {
		if mf.GetName() != family {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for i := 0; i < len(kv); i += 2 {
				if labels[kv[i]] != kv[i+1] {
					continue metrics
				}
			}
			switch {
			case m.GetHistogram() != nil && sum:
				return m.GetHistogram().GetSampleSum()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, kv)
	return 0
}
