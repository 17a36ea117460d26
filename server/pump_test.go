package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server/wire"
)

// clientWriter is a ResponseWriter that honours write deadlines
// (http.ResponseController.SetWriteDeadline) as a connection does: once
// a deadline passes, the write waiting and every later one fail with
// os.ErrDeadlineExceeded. take is the client: it returns true when the
// client has taken a line, or false once its argument (closed when a
// deadline passes) is closed.
type clientWriter struct {
	header  http.Header
	take    func(expired <-chan struct{}) bool
	lines   atomic.Int64
	expired chan struct{}
	once    sync.Once

	mu    sync.Mutex
	timer *time.Timer // guarded by mu
}

func newClientWriter(take func(expired <-chan struct{}) bool) *clientWriter {
	return &clientWriter{header: http.Header{}, take: take, expired: make(chan struct{})}
}

func (w *clientWriter) Header() http.Header { return w.header }
func (w *clientWriter) WriteHeader(int)     {}
func (w *clientWriter) FlushError() error   { return nil }

func (w *clientWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
	}
	expire := func() { w.once.Do(func() { close(w.expired) }) }
	switch {
	case t.IsZero():
	case !t.After(time.Now()):
		expire() // at once, as a connection's next write fails at once
	default:
		w.timer = time.AfterFunc(time.Until(t), expire)
	}
	return nil
}

func (w *clientWriter) Write(b []byte) (int, error) {
	if !w.take(w.expired) {
		return 0, os.ErrDeadlineExceeded
	}
	w.lines.Add(1)
	return len(b), nil
}

func testServer(tb testing.TB, slow time.Duration) (*Server, *resource) {
	tb.Helper()
	s := &Server{
		cfg: Config{SlowWatcherTimeout: slow, WriteTimeout: time.Minute},
		log: slog.New(slog.DiscardHandler), enc: &wire.EventEncoder{}, closing: make(chan struct{}),
		clock: clock.RealClock{},
	}
	return s, &resource{Resource: Resource{Group: group, Version: "v1", Kind: "Widget", Plural: "widgets"},
		gvString: "demo.listwatch.dev/v1", wire: wire.NewKind("demo.listwatch.dev/v1", "Widget")}
}

// fakeWatch is a storage watch holding n ADDED events.
func fakeWatch(n int) *watch.FakeWatcher {
	src := watch.NewFakeWithChanSize(n, false)
	for i := range n {
		src.Add(widget.NewUnstructuredWidget("ns", fmt.Sprintf("w%d", i), nil))
	}
	return src
}

// TestStalledWriteEndsWatch: a client that takes nothing while events
// wait is ended after SlowWatcherTimeout (the watchdog sets its write
// deadline in the past), and the storage watch is released; the request's goroutine is the only one the
// watch has, so nothing else is left to stop.
func TestStalledWriteEndsWatch(t *testing.T) {
	const slow = 50 * time.Millisecond
	s, r := testServer(t, slow)
	src := fakeWatch(50)
	w := newClientWriter(func(expired <-chan struct{}) bool {
		<-expired
		return false
	})
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("pump did not end its stalled watch")
	}
	require.GreaterOrEqual(t, time.Since(start), slow*9/10)
	require.True(t, src.IsStopped(), "the storage watch is released")
	require.Zero(t, w.lines.Load())
}

func TestFastWatcherGetsEverything(t *testing.T) {
	s, r := testServer(t, time.Minute)
	src := fakeWatch(50)
	src.Stop()
	w := newClientWriter(func(<-chan struct{}) bool { return true })
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	require.Equal(t, int64(50), w.lines.Load())
}

// TestSlowButReadingWatcherIsNotEnded: a client that takes a line every
// 10 ms is never ended by a 40 ms SlowWatcherTimeout, although writing
// the 40 events waiting for it takes it 400 ms: the deadline moves on
// with each line taken, the policy is about a client taking nothing.
// The server's clock is fake and the client moves it on by its pace as it
// takes each line: on the real clock, a loaded machine that runs the
// client 40 ms late would be a client taking nothing for 40 ms.
func TestSlowButReadingWatcherIsNotEnded(t *testing.T) {
	const slow, pace, events = 40 * time.Millisecond, 10 * time.Millisecond, 40
	s, r := testServer(t, slow)
	fake := clocktesting.NewFakeClock(time.Now())
	s.clock = fake
	src := fakeWatch(events)
	src.Stop()
	start := fake.Now()
	w := newClientWriter(func(expired <-chan struct{}) bool {
		select {
		case <-expired: // the watchdog fired (synchronously, in an earlier Step)
			return false
		default:
		}
		fake.Step(pace)
		return true
	})
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	require.Equal(t, int64(events), w.lines.Load())
	require.Greater(t, fake.Since(start), slow, "the client took longer than the timeout in all")
}

func mustJSON(tb testing.TB, u *unstructured.Unstructured) []byte {
	tb.Helper()
	b, err := u.MarshalJSON()
	require.NoError(tb, err)
	return b
}

func TestWatchTimeout(t *testing.T) {
	require.Equal(t, 5*time.Second, watchTimeout(5*time.Second, time.Minute))
	require.Equal(t, time.Minute, watchTimeout(time.Hour, time.Minute))
	for range 100 {
		d := watchTimeout(0, time.Minute)
		require.GreaterOrEqual(t, d, 30*time.Second)
		require.LessOrEqual(t, d, time.Minute)
	}
}

// lineWriter records what a watch writes.
type lineWriter struct {
	header http.Header
	mu     sync.Mutex
	body   []byte
}

func (w *lineWriter) Header() http.Header { return w.header }
func (w *lineWriter) WriteHeader(int)     {}
func (w *lineWriter) FlushError() error   { return nil }
func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.body = append(w.body, b...)
	return len(b), nil
}

// TestUnencodableEventEndsWatchWithoutItsCause: an event the server
// cannot encode ends the watch with an ERROR event whose Status says that
// the server failed, not the encoder's error (which the log has).
func TestUnencodableEventEndsWatchWithoutItsCause(t *testing.T) {
	s, r := testServer(t, time.Minute)
	var logs syncBuffer
	s.log = slog.New(slog.NewTextHandler(&logs, nil))
	bad := widget.NewUnstructuredWidget("ns", "bad", nil)
	bad.Object["spec"] = map[string]any{"replicas": math.NaN()}
	src := watch.NewFakeWithChanSize(2, false)
	src.Add(bad)
	src.Add(widget.NewUnstructuredWidget("ns", "after", nil))
	src.Stop()
	w := &lineWriter{header: http.Header{}}
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	lines := strings.Split(strings.TrimSpace(string(w.body)), "\n")
	require.Len(t, lines, 1, "the ERROR event ends the watch: %s", w.body)
	var ev struct {
		Type   string
		Object metav1.Status
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, "ERROR", ev.Type)
	require.EqualValues(t, http.StatusInternalServerError, ev.Object.Code)
	require.NotContains(t, lines[0], "NaN", "the client is told the encoder's error")
	require.NotContains(t, lines[0], "json:", "the client is told the encoder's error")
	logs.mu.Lock()
	defer logs.mu.Unlock()
	require.Contains(t, logs.b.String(), "NaN", "the log names the cause")
}
