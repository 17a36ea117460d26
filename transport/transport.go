package transport

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/utils/clock"
)

// Defaults of Config, those of client-go's rest.Config.
const (
	// DefaultQPS is the sustained rate, in requests a second, of a
	// Transport whose Config.QPS is 0.
	DefaultQPS float32 = 5
	// DefaultBurst is how many requests a Transport whose Config.Burst is
	// 0 sends at once before it waits.
	DefaultBurst = 10
	// DefaultTooManyRequestsRetries is how many times a request answered
	// 429 is sent again (client-go's REST client: 10).
	DefaultTooManyRequestsRetries = 10
	// MaxRetryAfter caps the wait a Retry-After header may ask for.
	MaxRetryAfter = 10 * time.Second
	// LongWait is the rate-limit wait past which a request is logged at
	// Debug level (client-go: 50 ms, at V(3)); past LongWaitWarn it is
	// logged at Info level, at most once every LongWaitLogEvery.
	LongWait         = 50 * time.Millisecond
	LongWaitWarn     = time.Second
	LongWaitLogEvery = 10 * time.Second
)

// Config configures New.
type Config struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// QPS is the sustained rate of requests a second the token bucket
	// allows: 0 means DefaultQPS, a negative value means no client-side
	// limit (Burst is then ignored).
	QPS float32
	// Burst is how many tokens the bucket holds, the requests sent at once
	// after a quiet spell: 0 means DefaultBurst; negative is invalid.
	Burst int
	// Logger receives the long waits; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the metrics: rest_client_rate_limiter_duration_seconds
	// (every wait for a token, 0 included), rest_client_request_retries_total
	// (429s sent again) and rest_client_rate_limiter_deadline_exceeded_total
	// (ThrottleErrors), by verb. Transports on one registry share them. Nil
	// records none.
	Registerer prometheus.Registerer
}

// Transport is an http.RoundTripper that rate-limits and resends 429s (see
// the package doc). Safe for concurrent use; share one between every
// client of one server.
type Transport struct {
	base    http.RoundTripper
	limiter *rate.Limiter // nil: no limit
	log     *slog.Logger
	metrics *metrics // nil: none
	clock   clock.Clock

	mu      sync.Mutex
	lastLog time.Time // of the last Info-level long wait
}

var _ http.RoundTripper = (*Transport)(nil)

// New validates cfg and returns its Transport.
func New(cfg Config) (*Transport, error) {
	return newTransport(cfg, clock.RealClock{})
}

func newTransport(cfg Config, clk clock.Clock) (*Transport, error) {
	if cfg.Burst < 0 {
		return nil, fmt.Errorf("transport: Burst %d: must not be negative (0 means DefaultBurst)", cfg.Burst)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	t := &Transport{base: cfg.Base, log: cfg.Logger, metrics: m, clock: clk}
	if t.base == nil {
		t.base = http.DefaultTransport
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if cfg.QPS >= 0 {
		qps, burst := cfg.QPS, cfg.Burst
		if qps == 0 {
			qps = DefaultQPS
		}
		if burst == 0 {
			burst = DefaultBurst
		}
		t.limiter = rate.NewLimiter(rate.Limit(qps), burst)
	}
	return t, nil
}

// Wrap returns hc (http.DefaultClient when nil) when its transport is a
// *Transport, else a copy of hc whose transport is a new Transport with
// the defaults over hc's transport: what client.NewHTTP and httplw.New do
// with the http.Client they are given.
func Wrap(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	if _, ok := hc.Transport.(*Transport); ok {
		return hc
	}
	c := *hc
	c.Transport, _ = New(Config{Base: hc.Transport}) // the zero Config is valid
	return &c
}

// Limited reports whether t has a client-side rate limit.
func (t *Transport) Limited() bool { return t.limiter != nil }

// RoundTrip implements http.RoundTripper: it waits for a token, sends req,
// and resends a 429 that is not a watch's while retries remain, the body
// can be sent again, and the wait ends before req's deadline.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.wait(req, ""); err != nil {
		closeBody(req)
		return nil, err
	}
	watch := isWatch(req)
	for attempt := 0; ; attempt++ {
		resp, err := t.base.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || watch || attempt == DefaultTooManyRequestsRetries {
			return resp, err
		}
		next, ok := resend(req)
		if !ok {
			return resp, nil
		}
		wait := retryWait(resp, t.clock.Now())
		if dl, ok := req.Context().Deadline(); ok && t.clock.Now().Add(wait).After(dl) {
			closeBody(next)
			return resp, nil // the wait would outlast the request: its 429 now
		}
		drain(resp)
		t.metrics.retried(req, "429")
		t.log.Debug("429 Too Many Requests: sending the request again", "after", wait,
			"attempt", attempt+2, "method", req.Method, "url", req.URL.Redacted())
		if err := t.sleep(req, wait); err != nil {
			closeBody(next)
			return nil, err
		}
		req = next
		if err := t.wait(req, "429 Too Many Requests, attempt "+strconv.Itoa(attempt+2)); err != nil {
			closeBody(req)
			return nil, err
		}
	}
}

// resend returns a copy of req to send again, with a fresh body; false
// when the body cannot be produced again.
func resend(req *http.Request) (*http.Request, bool) {
	next := req.Clone(req.Context())
	if req.Body == nil || req.Body == http.NoBody {
		return next, true
	}
	if req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	next.Body = body
	return next, true
}

// sleep waits d or until req's context ends (its error then).
func (t *Transport) sleep(req *http.Request, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	tm := t.clock.NewTimer(d)
	defer tm.Stop()
	select {
	case <-req.Context().Done():
		return req.Context().Err()
	case <-tm.C():
		return nil
	}
}

// isWatch reports whether req is a watch, a request that holds its answer
// open: ?watch=true, Kubernetes' spelling.
func isWatch(req *http.Request) bool {
	w, _ := strconv.ParseBool(req.URL.Query().Get("watch"))
	return w
}

func closeBody(req *http.Request) {
	if req != nil && req.Body != nil {
		_ = req.Body.Close()
	}
}

// drain reads and closes a body that is not used, so that its connection
// can be reused.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

// CloseIdleConnections closes the base transport's idle connections
// (http.Client.CloseIdleConnections reaches them through t).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// errNoToken is the limiter refusing to reserve one token, which a bucket
// of Burst >= 1 (what New makes) never does.
var errNoToken = errors.New("transport: the rate limiter cannot give one token")
