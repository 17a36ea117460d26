package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
)

// stalledWriter is a ResponseWriter whose first Write blocks until
// release is closed, like a client that stopped reading.
type stalledWriter struct {
	header  http.Header
	release chan struct{}
	lines   atomic.Int64
	once    sync.Once
}

func (w *stalledWriter) Header() http.Header { return w.header }
func (w *stalledWriter) WriteHeader(int)     {}
func (w *stalledWriter) Flush()              {}
func (w *stalledWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { <-w.release })
	w.lines.Add(1)
	return len(b), nil
}

func testServer(tb testing.TB, buffer int, slow time.Duration) (*Server, *resource) {
	tb.Helper()
	s := &Server{
		cfg: Config{SlowWatcherTimeout: slow, WriteTimeout: time.Minute}, watchQueue: buffer,
		log: slog.New(slog.DiscardHandler), enc: &eventEncoder{}, closing: make(chan struct{}),
	}
	return s, &resource{Resource: Resource{Group: group, Version: "v1", Kind: "Widget", Plural: "widgets"},
		gvString: "demo.listwatch.dev/v1", wire: newWireFormats("demo.listwatch.dev/v1", "Widget")}
}

func TestSlowWatcherIsEndedWithBoundedBuffer(t *testing.T) {
	s, r := testServer(t, 2, 50*time.Millisecond)
	src := watch.NewFakeWithChanSize(100, false)
	for i := range 50 {
		src.Add(testapi.MakeUnstructured("ns", fmt.Sprintf("w%d", i), nil))
	}
	w := &stalledWriter{header: http.Header{}, release: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	}()
	// The reader gives up on its own and releases the storage watch while
	// the connection is still stalled.
	require.Eventually(t, src.IsStopped, 5*time.Second, 5*time.Millisecond)
	close(w.release)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("pump did not end after the overflow")
	}
	// At most the stalled event, the buffer and the event being queued.
	require.LessOrEqual(t, w.lines.Load(), int64(1+2+1))
}

func TestFastWatcherGetsEverything(t *testing.T) {
	s, r := testServer(t, 2, time.Minute)
	src := watch.NewFakeWithChanSize(100, false)
	for i := range 50 {
		src.Add(testapi.MakeUnstructured("ns", fmt.Sprintf("w%d", i), nil))
	}
	src.Stop()
	w := &stalledWriter{header: http.Header{}, release: make(chan struct{})}
	close(w.release)
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	require.Equal(t, int64(50), w.lines.Load())
}

// tricklingWriter is a ResponseWriter that takes each write slowly, like
// a client that keeps reading but slower than events come.
type tricklingWriter struct {
	header http.Header
	lines  atomic.Int64
}

func (w *tricklingWriter) Header() http.Header { return w.header }
func (w *tricklingWriter) WriteHeader(int)     {}
func (w *tricklingWriter) Flush()              {}
func (w *tricklingWriter) Write(b []byte) (int, error) {
	time.Sleep(10 * time.Millisecond) // the client's pace, not synchronisation
	w.lines.Add(1)
	return len(b), nil
}

// TestSlowButReadingWatcherIsNotEnded: a client that takes a line every
// 10 ms is never ended by a 40 ms SlowWatcherTimeout, although writing a
// full queue of 10 lines takes it 100 ms: the policy is about a client
// taking nothing, not about a queue staying full.
func TestSlowButReadingWatcherIsNotEnded(t *testing.T) {
	s, r := testServer(t, 10, 40*time.Millisecond)
	src := watch.NewFakeWithChanSize(100, false)
	for i := range 40 {
		src.Add(testapi.MakeUnstructured("ns", fmt.Sprintf("w%d", i), nil))
	}
	src.Stop()
	w := &tricklingWriter{header: http.Header{}}
	s.pump(context.Background(), w, http.NewResponseController(w), src, r)
	require.Equal(t, int64(40), w.lines.Load())
}

// TestEventEncoderSharesLines: watchers given one change's encodings
// (storage.EncodedObject) share one line per event type, made once; an
// unwrapped object is encoded per call.
func TestEventEncoderSharesLines(t *testing.T) {
	_, r := testServer(t, 1, time.Second)
	e := &eventEncoder{}
	obj := testapi.MakeUnstructured("ns", "a", nil)
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
	_, r := testServer(t, 1, time.Second)
	codec := CacheCodec(r.Resource)
	obj := testapi.MakeUnstructured("ns", "a", nil)
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
	_, r := testServer(t, 1, time.Second)
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
