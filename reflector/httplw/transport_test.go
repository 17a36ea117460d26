package httplw

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/transport"
)

// shedder stands in front of the fixture's server: it answers the first
// busy lists (watches, when watches is set) 429 with Retry-After: 0, as
// the server's in-flight limit does, and counts the lists and watches
// that reach it.
type shedder struct {
	next           http.Handler
	busy           int32
	watches        bool
	shed, lists, w atomic.Int32
}

func (s *shedder) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	isWatch, _ := strconv.ParseBool(r.URL.Query().Get("watch"))
	if isWatch == s.watches && s.shed.Add(1) <= s.busy {
		rw.Header().Set("Retry-After", "0")
		http.Error(rw, "busy", http.StatusTooManyRequests)
		return
	}
	if isWatch {
		s.w.Add(1)
	} else {
		s.lists.Add(1)
	}
	s.next.ServeHTTP(rw, r)
}

// front serves the fixture's server behind s and returns its URL.
func (f *fixture) front(s *shedder) string {
	s.next = f.srv
	ts := httptest.NewServer(s)
	f.t.Cleanup(ts.Close)
	return ts.URL
}

// TestListTooManyRequestsRetried: a list answered 429 twice is sent again
// after Retry-After (by the transport, within its deadline) and returns
// the objects.
func TestListTooManyRequestsRetried(t *testing.T) {
	f := newFixture(t)
	f.put("ns", "a", nil)
	f.put("ns", "b", nil)
	s := &shedder{busy: 2}
	url := f.front(s)
	lw := f.lw("ns", func(c *Config) { c.BaseURL = url })
	obj, err := lw.List(testCtx(t), metav1.ListOptions{})
	require.NoError(t, err)
	items, err := meta.ExtractList(obj)
	require.NoError(t, err)
	assert.Len(t, items, 2)
	assert.EqualValues(t, 3, s.shed.Load(), "two 429s, then the list")
	assert.EqualValues(t, 1, s.lists.Load())
}

// TestWatchTooManyRequestsReturned: a watch answered 429 is not sent
// again: the error goes to the caller (the reflector backs off).
func TestWatchTooManyRequestsReturned(t *testing.T) {
	f := newFixture(t)
	s := &shedder{busy: 1, watches: true}
	url := f.front(s)
	lw := f.lw("ns", func(c *Config) { c.BaseURL = url })
	_, err := lw.Watch(testCtx(t), metav1.ListOptions{})
	require.True(t, apierrors.IsTooManyRequests(err), "%v", err)
	assert.EqualValues(t, 1, s.shed.Load())
	w, err := lw.Watch(testCtx(t), metav1.ListOptions{})
	require.NoError(t, err, "the next watch is served")
	w.Stop()
}

// throttled returns a transport whose bucket holds burst tokens and
// refills one in about 17 minutes: past the burst, every request of a
// test with a deadline fails at once with a *transport.ThrottleError.
func throttled(t *testing.T, burst int) *http.Client {
	t.Helper()
	rt, err := transport.New(transport.Config{Base: &http.Transport{}, QPS: 0.001, Burst: burst})
	require.NoError(t, err)
	hc := &http.Client{Transport: rt}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// TestRateLimitShared: two ListerWatchers given one Transport share its
// bucket: past the burst, a list whose turn comes after its deadline fails
// at once with the typed error, without reaching the server.
func TestRateLimitShared(t *testing.T) {
	f := newFixture(t)
	s := &shedder{}
	url := f.front(s)
	hc := throttled(t, 2)
	a := f.lw("ns", func(c *Config) { c.BaseURL, c.HTTPClient = url, hc })
	b := f.lw("", func(c *Config) { c.BaseURL, c.HTTPClient = url, hc })
	ctx := testCtx(t)
	_, err := a.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	_, err = b.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	for _, lw := range []*ListerWatcher{a, b} {
		_, err = lw.List(ctx, metav1.ListOptions{})
		require.ErrorIs(t, err, transport.ErrThrottled)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var te *transport.ThrottleError
		require.ErrorAs(t, err, &te)
		assert.Greater(t, te.Wait, 10*time.Minute)
		assert.Equal(t, http.MethodGet, te.Method)
	}
	assert.EqualValues(t, 2, s.lists.Load(), "the throttled lists were not sent")
	assert.NoError(t, ctx.Err(), "they failed before the deadline")
}

// TestWatchCountsOnce: a watch takes one token when it starts and none
// for its events: with a bucket of one token, it delivers every event,
// and the list after it finds the bucket empty.
func TestWatchCountsOnce(t *testing.T) {
	f := newFixture(t)
	s := &shedder{}
	url := f.front(s)
	lw := f.lw("ns", func(c *Config) { c.BaseURL, c.HTTPClient = url, throttled(t, 1) })
	ctx := testCtx(t)
	w, err := lw.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	const n = 3 * transport.DefaultBurst
	for i := range n {
		f.put("ns", fmt.Sprintf("w%d", i), nil)
	}
	for i := range n {
		ev := next(t, w)
		require.Equal(t, watch.Added, ev.Type, "event %d", i)
	}
	_, err = lw.List(ctx, metav1.ListOptions{})
	require.ErrorIs(t, err, transport.ErrThrottled)
	assert.EqualValues(t, 1, s.w.Load())
	assert.EqualValues(t, 0, s.lists.Load())
}
