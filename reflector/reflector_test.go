package reflector

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
)

func goneStatus() *metav1.Status {
	st := apierrors.NewResourceExpired("too old resource version").ErrStatus
	return &st
}

func TestReflectorListThenWatchFromListRV(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	r, _ := runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) { c.MinWatchTimeout = 100 * time.Second })

	opts := lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "3", nil)), nil)
	if opts.ResourceVersion != "0" || opts.Limit != DefaultPageSize {
		t.Fatalf("initial list options = %+v, want RV 0, limit 500", opts)
	}
	store.expect(t, "replace 10 [ns/a@3]")
	w, wopts := lw.expectWatch(t, nil)
	if wopts.ResourceVersion != "10" || !wopts.AllowWatchBookmarks || wopts.TimeoutSeconds == nil {
		t.Fatalf("watch options = %+v", wopts)
	}
	if s := *wopts.TimeoutSeconds; s < 100 || s >= 200 {
		t.Fatalf("watch timeout %ds outside [100,200)", s)
	}
	w.send(t, watch.Added, testWidget("ns", "b", "11", nil))
	w.send(t, watch.Modified, testWidget("ns", "a", "12", nil))
	w.send(t, watch.Deleted, testWidget("ns", "b", "13", nil))
	store.expect(t, "add ns/b@11")
	store.expect(t, "update ns/a@12")
	store.expect(t, "delete ns/b@13")
	w.send(t, watch.Bookmark, bookmark("20", false))
	// The next (blocking) send proves the bookmark has been handled.
	w.send(t, watch.Bookmark, bookmark("21", false))
	if got := r.LastSyncResourceVersion(); got != "20" && got != "21" {
		t.Fatalf("LastSyncResourceVersion = %q after bookmarks", got)
	}
}

func TestReflectorNormalWatchEndRewatchesWithoutRelist(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	runReflector(t, lw, store, nil)
	lw.expectList(t, widgetList("10", ""), nil)
	store.expect(t, "replace 10 []")
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Modified, testWidget("ns", "a", "15", nil))
	w.end()
	// The next call must be a watch (not a list) from the last event's RV.
	w2, opts := lw.expectWatch(t, nil)
	if opts.ResourceVersion != "15" {
		t.Fatalf("re-watch from %q, want 15", opts.ResourceVersion)
	}
	w2.send(t, watch.Added, testWidget("ns", "b", "16", nil))
	store.expect(t, "update ns/a@15")
	store.expect(t, "add ns/b@16")
}

func TestReflectorGoneRelistsAtLastRVThenConsistently(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	r, errs := runReflector(t, lw, store, nil)
	lw.expectList(t, widgetList("10", ""), nil)
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Modified, testWidget("ns", "a", "15", nil))
	w.send(t, watch.Error, goneStatus())
	w.waitStopped(t)

	// 410 on the watch: relist at the last synced RV, not "" (no herd on etcd),
	// and unpaginated since the RV is exact.
	opts := lw.expectList(t, nil, storage.NewGoneError(15, 40))
	if opts.ResourceVersion != "15" || opts.Limit != 0 {
		t.Fatalf("relist after watch 410 = %+v, want RV 15 without limit", opts)
	}
	// That list is itself too old: retry at once with a consistent read.
	opts = lw.expectList(t, widgetList("50", "", testWidget("ns", "c", "45", nil)), nil)
	if opts.ResourceVersion != "" {
		t.Fatalf("list after an expired list at RV 15 used RV %q, want \"\"", opts.ResourceVersion)
	}
	_, wopts := lw.expectWatch(t, nil)
	if wopts.ResourceVersion != "50" {
		t.Fatalf("watch after relist from %q", wopts.ResourceVersion)
	}
	if r.LastSyncResourceVersion() != "50" {
		t.Fatalf("LastSyncResourceVersion = %q", r.LastSyncResourceVersion())
	}
	var sawGone bool
	for len(errs) > 0 {
		if isExpired(<-errs) {
			sawGone = true
		}
	}
	if !sawGone {
		t.Fatal("watch error handler did not see the 410")
	}
	for _, want := range []string{"replace 10 []", "update ns/a@15", "replace 50 [ns/c@45]"} {
		store.expect(t, want)
	}
}

func TestReflectorTooLargeRVListRetriesConsistently(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	runReflector(t, lw, store, nil)
	lw.expectList(t, widgetList("10", ""), nil)
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Error, goneStatus())
	opts := lw.expectList(t, nil, storage.NewTooLargeResourceVersionError(10, 5, 1))
	if opts.ResourceVersion != "10" {
		t.Fatalf("relist RV %q", opts.ResourceVersion)
	}
	if opts := lw.expectList(t, widgetList("60", ""), nil); opts.ResourceVersion != "" {
		t.Fatalf("after too-large RV the list used %q, want \"\"", opts.ResourceVersion)
	}
	store.expect(t, "replace 10 []")
	store.expect(t, "replace 60 []")
}

func TestReflectorPaginationFallsBackToFullListWhenContinueExpires(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	runReflector(t, lw, store, nil)
	opts := lw.expectList(t, widgetList("10", "tok1", testWidget("ns", "a", "3", nil)), nil)
	if opts.Limit != DefaultPageSize || opts.ResourceVersion != "0" {
		t.Fatalf("first page options %+v", opts)
	}
	opts = lw.expectList(t, nil, storage.NewGoneError(10, 20))
	if opts.Continue != "tok1" || opts.ResourceVersion != "" || opts.Limit != DefaultPageSize {
		t.Fatalf("second page options %+v", opts)
	}
	opts = lw.expectList(t, widgetList("25", "", testWidget("ns", "a", "3", nil), testWidget("ns", "b", "22", nil)), nil)
	if opts.Continue != "" || opts.Limit != 0 || opts.ResourceVersion != "0" {
		t.Fatalf("fallback list options %+v, want a full list at the original RV", opts)
	}
	store.expect(t, "replace 25 [ns/a@3 ns/b@22]")
	if _, wopts := lw.expectWatch(t, nil); wopts.ResourceVersion != "25" {
		t.Fatalf("watch from %q", wopts.ResourceVersion)
	}
}

func TestReflectorPagesAreJoined(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) { c.PageSize = 2 })
	if o := lw.expectList(t, widgetList("10", "t1", testWidget("ns", "a", "1", nil), testWidget("ns", "b", "2", nil)), nil); o.Limit != 2 {
		t.Fatalf("limit %d", o.Limit)
	}
	lw.expectList(t, widgetList("10", "", testWidget("ns", "c", "3", nil)), nil)
	store.expect(t, "replace 10 [ns/a@1 ns/b@2 ns/c@3]")
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Error, goneStatus())
	// The RV "0" list came back paginated: later lists keep paginating.
	if o := lw.expectList(t, widgetList("12", ""), nil); o.Limit != 2 || o.ResourceVersion != "10" {
		t.Fatalf("relist options %+v, want paginated at RV 10", o)
	}
}

func TestReflectorRetriableErrorsBackOffAndRewatch(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	_, errs := runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) {
		c.Backoff.Duration = 40 * time.Millisecond
	})
	lw.expectList(t, widgetList("10", ""), nil)
	var attempts []time.Time
	for i := 0; i < 4; i++ {
		_, opts := lw.expectWatch(t, apierrors.NewTooManyRequests("slow down", 0))
		attempts = append(attempts, time.Now())
		if opts.ResourceVersion != "10" {
			t.Fatalf("retry %d watched from %q", i, opts.ResourceVersion)
		}
	}
	// 429 during a watch also re-watches without a relist.
	w, _ := lw.expectWatch(t, nil)
	st := apierrors.NewTooManyRequests("slow down", 0).ErrStatus
	w.send(t, watch.Error, &st)
	if _, opts := lw.expectWatch(t, nil); opts.ResourceVersion != "10" {
		t.Fatalf("re-watch after in-stream 429 from %q", opts.ResourceVersion)
	}
	// Exponential: each gap at least the doubled base delay (no jitter here).
	want := 40 * time.Millisecond
	for i := 1; i < len(attempts); i++ {
		if gap := attempts[i].Sub(attempts[i-1]); gap < want*9/10 {
			t.Fatalf("gap %d = %v, want ≥ %v", i, gap, want)
		}
		want *= 2
	}
	if len(errs) < 4 {
		t.Fatalf("watch error handler saw %d errors, want ≥ 4", len(errs))
	}
}

func TestReflectorDoesNotAdvanceRVDuringInitialAdds(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	r, _ := runReflector(t, lw, store, nil)
	lw.expectList(t, widgetList("", ""), nil) // a server that reports no list RV
	w, opts := lw.expectWatch(t, nil)
	if opts.ResourceVersion != "" {
		t.Fatalf("watch RV %q", opts.ResourceVersion)
	}
	w.send(t, watch.Added, testWidget("ns", "b", "9", nil))
	w.send(t, watch.Added, testWidget("ns", "a", "4", nil))
	w.send(t, watch.Added, testWidget("ns", "c", "7", nil)) // blocks until "a" is handled
	if got := r.LastSyncResourceVersion(); got != "" {
		t.Fatalf("RV advanced to %q during the unordered initial ADDED phase", got)
	}
	w.send(t, watch.Modified, testWidget("ns", "a", "12", nil))
	w.send(t, watch.Added, testWidget("ns", "d", "13", nil))
	w.send(t, watch.Bookmark, bookmark("13", false)) // blocks until "d" is handled
	if got := r.LastSyncResourceVersion(); got != "13" {
		t.Fatalf("RV = %q after ordered events, want 13", got)
	}
}

func TestReflectorWatchListKeepsStream(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	r, _ := runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) { c.UseWatchList = true })
	w, opts := lw.expectWatch(t, nil)
	if opts.SendInitialEvents == nil || !*opts.SendInitialEvents ||
		opts.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan || !opts.AllowWatchBookmarks {
		t.Fatalf("watch-list options %+v", opts)
	}
	w.send(t, watch.Added, testWidget("ns", "b", "9", nil))
	w.send(t, watch.Added, testWidget("ns", "a", "4", nil))
	w.send(t, watch.Bookmark, bookmark("5", false)) // progress only, not the end
	w.send(t, watch.Added, testWidget("ns", "c", "7", nil))
	if got := r.LastSyncResourceVersion(); got != "" {
		t.Fatalf("RV %q before the initial-events-end bookmark", got)
	}
	w.send(t, watch.Bookmark, bookmark("10", true))
	store.expect(t, "replace 10 [ns/a@4 ns/b@9 ns/c@7]")
	// The same stream carries on.
	w.send(t, watch.Modified, testWidget("ns", "a", "11", nil))
	store.expect(t, "update ns/a@11")
	if r.LastSyncResourceVersion() != "11" {
		t.Fatalf("RV %q", r.LastSyncResourceVersion())
	}
	select {
	case c := <-lw.calls:
		t.Fatalf("unexpected %s call %+v while the stream is open", c.kind, c.opts)
	default:
	}
}

func TestReflectorWatchListFallsBackToList(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	_, errs := runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) { c.UseWatchList = true })
	w, _ := lw.expectWatch(t, nil)
	w.send(t, watch.Added, testWidget("ns", "a", "4", nil))
	w.end() // closed before the initial-events-end bookmark
	opts := lw.expectList(t, widgetList("10", "", testWidget("ns", "a", "4", nil)), nil)
	if opts.ResourceVersion != "0" {
		t.Fatalf("fallback list at %q", opts.ResourceVersion)
	}
	store.expect(t, "replace 10 [ns/a@4]")
	lw.expectWatch(t, nil)
	var early bool
	for len(errs) > 0 {
		if errors.Is(<-errs, errWatchClosedEarly) {
			early = true
		}
	}
	if !early {
		t.Fatal("the failed watch-list was not reported")
	}
}

func TestReflectorResyncCallsStore(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	allow := make(chan bool, 10)
	allow <- false
	allow <- true
	runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) {
		c.ResyncPeriod = 20 * time.Millisecond
		c.ShouldResync = func() bool {
			select {
			case ok := <-allow:
				return ok
			default:
				return false
			}
		}
	})
	lw.expectList(t, widgetList("10", ""), nil)
	store.expect(t, "replace 10 []")
	lw.expectWatch(t, nil)
	store.expect(t, "resync") // the second tick, the first was refused
	select {
	case op := <-store.ops:
		if op == "resync" {
			t.Fatal("resync happened although ShouldResync refused")
		}
	case <-time.After(100 * time.Millisecond):
	}
}

func TestNewReflectorValidates(t *testing.T) {
	if _, err := NewReflector(ReflectorConfig[*widget.Widget]{Store: newRecStore()}); err == nil {
		t.Fatal("missing ListerWatcher accepted")
	}
	if _, err := NewReflector(ReflectorConfig[*widget.Widget]{ListerWatcher: newScriptedLW()}); err == nil {
		t.Fatal("missing Store accepted")
	}
}

func TestReflectorWatchListAppliesStoreTransformWhileBuffering(t *testing.T) {
	lw := newScriptedLW()
	seen := make(chan string, 10)
	fifo := NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{Transform: func(w *widget.Widget) (*widget.Widget, error) {
		if w.Spec.Data != "" {
			seen <- w.Name
			w.Spec.Data = ""
		}
		return w, nil
	}})
	runReflector(t, lw, fifo, func(c *ReflectorConfig[*widget.Widget]) { c.UseWatchList = true })
	w, _ := lw.expectWatch(t, nil)
	big := testWidget("ns", "a", "4", nil)
	big.Spec.Data = strings.Repeat("x", 1000)
	w.send(t, watch.Added, big)
	w.send(t, watch.Bookmark, bookmark("5", false)) // handled after "a" was buffered
	select {
	case n := <-seen:
		if n != "a" {
			t.Fatalf("transformed %q", n)
		}
	default:
		t.Fatal("object buffered untransformed before the initial-events-end bookmark")
	}
	w.send(t, watch.Bookmark, bookmark("6", true))
	eventually(t, "replace", func() bool { return fifo.Len() == 1 })
}

func TestErrorClassification(t *testing.T) {
	cases := []struct {
		name                     string
		err                      error
		expired, tooLarge, retry bool
	}{
		{"storage gone", fmt.Errorf("wrapped: %w", storage.NewGoneError(3, 9)), true, false, false},
		{"api expired", apierrors.NewResourceExpired("old"), true, false, false},
		{"api gone", apierrors.NewGone("gone"), true, false, false},
		{"storage too large", storage.NewTooLargeResourceVersionError(9, 3, 1), false, true, true},
		{"429", apierrors.NewTooManyRequests("slow", 1), false, false, true},
		{"storage not ready", &storage.Error{Code: storage.CodeNotReady}, false, false, true},
		{"503", apierrors.NewServiceUnavailable("down"), false, false, true},
		{"storage unreachable", &storage.Error{Code: storage.CodeUnreachable}, false, false, true},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, false, false, true},
		{"internal", apierrors.NewInternalError(errors.New("x")), false, false, false},
		{"message only", errors.New("too old resource version"), false, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := isExpired(tc.err); got != tc.expired {
				t.Errorf("isExpired = %v", got)
			}
			if got := isTooLargeResourceVersion(tc.err); got != tc.tooLarge {
				t.Errorf("isTooLargeResourceVersion = %v", got)
			}
			if got := isRetriable(tc.err); got != tc.retry {
				t.Errorf("isRetriable = %v", got)
			}
		})
	}
}

func TestReflectorFullJitterStaysWithinExponentialBound(t *testing.T) {
	r, err := NewReflector(ReflectorConfig[*widget.Widget]{ListerWatcher: newScriptedLW(), Store: newRecStore(),
		Backoff: wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 100, Cap: 800 * time.Millisecond}})
	must(t, err)
	bound := 100 * time.Millisecond
	distinct := map[time.Duration]bool{}
	for i := 0; i < 40; i++ {
		d := r.delay()
		if d < 0 || d > bound {
			t.Fatalf("delay %d = %v outside [0, %v]", i, d, bound)
		}
		distinct[d] = true
		if bound < 800*time.Millisecond {
			bound *= 2
		}
	}
	if len(distinct) < 20 {
		t.Fatalf("only %d distinct delays: not jittered", len(distinct))
	}
}

func TestReflectorVeryShortWatchBacksOff(t *testing.T) {
	lw, store := newScriptedLW(), newRecStore()
	_, errs := runReflector(t, lw, store, func(c *ReflectorConfig[*widget.Widget]) {
		c.Backoff.Duration = 150 * time.Millisecond
	})
	lw.expectList(t, widgetList("10", ""), nil)
	w, _ := lw.expectWatch(t, nil)
	ended := time.Now()
	w.end() // closed at once, without a single event
	_, opts := lw.expectWatch(t, nil)
	if gap := time.Since(ended); gap < 130*time.Millisecond {
		t.Fatalf("re-watched after %v: no backoff after an immediately closed watch", gap)
	}
	if opts.ResourceVersion != "10" {
		t.Fatalf("re-watch from %q", opts.ResourceVersion)
	}
	var short bool
	for len(errs) > 0 {
		if errors.Is(<-errs, errVeryShortWatch) {
			short = true
		}
	}
	if !short {
		t.Fatal("very short watch not reported")
	}
}

// TestWatchErrorEventBecomesStorageError: the Status of a watch ERROR event
// (as it arrives over HTTP, a bare *metav1.Status) comes back as a typed
// *storage.Error that errors.Is recognises, wrapped as the reflector wraps it.
func TestWatchErrorEventBecomesStorageError(t *testing.T) {
	cases := []struct {
		name     string
		st       metav1.Status
		sentinel *storage.Error
	}{
		{"410 expired", apierrors.NewResourceExpired("too old resource version: 3 (9)").ErrStatus, storage.ErrGone},
		{"410 from storage", storage.NewGoneError(3, 9).Status(), storage.ErrGone},
		{"too large", storage.NewTooLargeResourceVersionError(9, 3, 1).Status(), storage.ErrTooLargeResourceVersion},
		{"503", storage.NewUnavailableError(nil, nil).Status(), storage.ErrUnavailable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := fmt.Errorf("watch error event: %w", watchEventError(&tc.st))
			var se *storage.Error
			if !errors.As(err, &se) || !errors.Is(err, tc.sentinel) {
				t.Fatalf("%v (%T) does not match %v", err, errors.Unwrap(err), tc.sentinel)
			}
			if se.Error() != tc.st.Message {
				t.Fatalf("message %q, want %q", se.Error(), tc.st.Message)
			}
		})
	}
}

// TestReflectorRetryDelayHonoursRetryAfter: after an error whose Status
// asks for a delay (a watch's 429, which the HTTP transport does not send
// again), the reflector waits at least that long, capped at Backoff.Cap;
// other errors and normal ends take the backoff's delay.
func TestReflectorRetryDelayHonoursRetryAfter(t *testing.T) {
	r, err := NewReflector(ReflectorConfig[*widget.Widget]{ListerWatcher: newScriptedLW(), Store: newRecStore(),
		Backoff: wait.Backoff{Duration: 10 * time.Millisecond, Factor: 1, Steps: 100, Cap: 3 * time.Second}, NoFullJitter: true})
	must(t, err)
	inStream := apierrors.NewTooManyRequests("slow down", 2).ErrStatus
	for name, c := range map[string]struct {
		err  error
		want time.Duration
	}{
		"normal end":        {nil, 10 * time.Millisecond},
		"429 Retry-After 1": {apierrors.NewTooManyRequests("slow down", 1), time.Second},
		"429 in stream":     {watchEventError(&inStream), 2 * time.Second},
		"429 past the cap":  {apierrors.NewTooManyRequests("slow down", 60), 3 * time.Second},
		"429 without one":   {apierrors.NewTooManyRequests("slow down", 0), 10 * time.Millisecond},
		"503 unavailable":   {storage.NewUnavailableError([]string{"127.0.0.1:2379"}, errors.New("down")), time.Second},
		"other":             {errors.New("boom"), 10 * time.Millisecond},
	} {
		if got := r.retryDelay(c.err); got != c.want {
			t.Errorf("%s: retryDelay = %v, want %v", name, got, c.want)
		}
	}
}
