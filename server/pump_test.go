package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
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
	if !t.IsZero() {
		w.timer = time.AfterFunc(time.Until(t), func() { w.once.Do(func() { close(w.expired) }) })
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
		log: slog.New(slog.DiscardHandler), enc: &eventEncoder{}, closing: make(chan struct{}),
	}
	return s, &resource{Resource: Resource{Group: group, Version: "v1", Kind: "Widget", Plural: "widgets"},
		gvString: "demo.listwatch.dev/v1", wire: newWireFormats("demo.listwatch.dev/v1", "Widget")}
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
func TestSlowButReadingWatcherIsNotEnded(t *testing.T) {
	s, r := testServer(t, 40*time.Millisecond)
	src := fakeWatch(40)
	src.Stop()
	w := newClientWriter(func(expired <-chan struct{}) bool {
		select {
		case <-time.After(10 * time.Millisecond): // the client's pace, not synchronisation
			return true
		case <-expired:
			return false
		}
	})
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	require.Equal(t, int64(40), w.lines.Load())
}

// TestEventEncoderSharesLines: watchers given one change's encodings
// (storage.EncodedObject) share one line per event type, made once; an
// unwrapped object is encoded per call.
func TestEventEncoderSharesLines(t *testing.T) {
	_, r := testServer(t, time.Second)
	e := &eventEncoder{}
	obj := widget.NewUnstructuredWidget("ns", "a", nil)
	shared := storage.NewEncodings("", nil)
	ev := watch.Event{Type: watch.Added, Object: &storage.EncodedObject{Object: obj, Encodings: shared}}

	var wg sync.WaitGroup
	lines := make([][]byte, 8)
	for i := range lines {
		// Each watcher has its own wrapper of the change's encodings.
		ev := watch.Event{Type: ev.Type, Object: &storage.EncodedObject{Object: obj, Encodings: shared}}
		wg.Go(func() {
			b, err := e.line(ev, r)
			require.NoError(t, err)
			lines[i] = b
		})
	}
	wg.Wait()
	for _, b := range lines {
		require.Same(t, &lines[0][0], &b[0], "every watcher shares one encoding")
	}
	require.Equal(t, int64(1), e.encodes.Load())
	require.JSONEq(t, `{"type":"ADDED","object":`+string(mustJSON(t, obj))+`}`, string(lines[0]))

	// Another type of event for the same object is another line.
	mod, err := e.line(watch.Event{Type: watch.Modified, Object: ev.Object}, r)
	require.NoError(t, err)
	require.Contains(t, string(mod), `"type":"MODIFIED"`)
	require.Equal(t, int64(2), e.encodes.Load())

	// Without a carrier, every call encodes on its own.
	a, err := e.line(watch.Event{Type: watch.Added, Object: obj}, r)
	require.NoError(t, err)
	b, err := e.line(watch.Event{Type: watch.Added, Object: obj}, r)
	require.NoError(t, err)
	require.NotSame(t, &a[0], &b[0])
	require.Equal(t, string(lines[0]), string(a))
}

// TestEventEncoderUsesCachedJSON: a change whose encodings hold the
// object's JSON in the resource's format (a cacher with CacheCodec) gets
// its line from those bytes, not from encoding the object.
func TestEventEncoderUsesCachedJSON(t *testing.T) {
	_, r := testServer(t, time.Second)
	codec := CacheCodec(r.Resource)
	obj := widget.NewUnstructuredWidget("ns", "a", nil)
	// Bytes that differ from obj's encoding show where the line came from.
	cached := []byte(`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"cached"}}`)
	ev := watch.Event{Type: watch.Deleted, Object: &storage.EncodedObject{Object: obj,
		Encodings: storage.NewEncodings(codec.Format(), cached)}}
	line, err := (&eventEncoder{}).line(ev, r)
	require.NoError(t, err)
	require.Equal(t, `{"type":"DELETED","object":`+string(cached)+"}\n", string(line))

	// The codec's encoding is the object part of the server's own line.
	enc, err := codec.Encode(obj)
	require.NoError(t, err)
	plain, err := encodeEvent(watch.Event{Type: watch.Deleted, Object: obj}, r)
	require.NoError(t, err)
	require.Equal(t, `{"type":"DELETED","object":`+string(enc)+"}\n", string(plain))
}

func TestBookmarkEncoding(t *testing.T) {
	_, r := testServer(t, time.Second)
	bm := &unstructured.Unstructured{}
	bm.SetResourceVersion("42")
	bm.SetAnnotations(map[string]string{"k8s.io/initial-events-end": "true"})
	b, err := (&eventEncoder{}).line(watch.Event{Type: watch.Bookmark, Object: bm}, r)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"BOOKMARK","object":{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget",
		"metadata":{"resourceVersion":"42","annotations":{"k8s.io/initial-events-end":"true"}}}}`, string(b))
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
