package controller_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// In the synctest tests below time is fake: time.Sleep advances it at once
// and synctest.Wait returns when every goroutine of the test is blocked,
// so "nothing more happens" can be asserted exactly.

func TestNoConcurrentReconcileOfOneKey(t *testing.T) {
	const (
		keys    = 8
		workers = 6
		senders = 4
		events  = 400 // per sender
	)
	var inFlight [keys]atomic.Int32
	var violations, total atomic.Int32
	var lastEvent, lastStart [keys]atomic.Int64
	var seq atomic.Int64
	keyOf := func(name string) int {
		var k int
		fmt.Sscanf(name, "w-%d", &k)
		return k
	}
	rec := &recorder{fn: func(_ context.Context, r controller.Request, _ int) (controller.Result, error) {
		k := keyOf(r.Name)
		if inFlight[k].Add(1) != 1 {
			violations.Add(1)
		}
		lastStart[k].Store(seq.Add(1))
		runtime.Gosched() // let another worker run inside the window
		inFlight[k].Add(-1)
		total.Add(1)
		return controller.Result{}, nil
	}}
	r := startController(t, controller.Options{Reconciler: rec, MaxConcurrentReconciles: workers}, true)
	r.waitRegistered(t)

	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range events {
				k := (i + s) % keys
				w := testWidget("ns", fmt.Sprintf("w-%d", k), int64(i))
				lastEvent[k].Store(seq.Add(1))
				r.informer.Update(w, w)
			}
		})
	}
	wg.Wait()
	// Every key must get a reconcile that started after its last event.
	require.Eventually(t, func() bool {
		for k := range keys {
			if lastStart[k].Load() < lastEvent[k].Load() {
				return false
			}
		}
		return true
	}, 10*time.Second, time.Millisecond)
	require.NoError(t, r.stop())

	assert.Zero(t, violations.Load(), "a key was reconciled by two workers at once")
	assert.Less(t, total.Load(), int32(senders*events), "events were folded into fewer reconciles")
}

func TestWorkersRunDifferentKeysInParallel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var arrived sync.WaitGroup
		arrived.Add(2)
		rec := &recorder{fn: func(context.Context, controller.Request, int) (controller.Result, error) {
			arrived.Done()
			arrived.Wait() // returns only if both reconciles run at once
			return controller.Result{}, nil
		}}
		r := startController(t, controller.Options{Reconciler: rec, MaxConcurrentReconciles: 2}, true)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "a", 1), true)
		r.informer.Add(testWidget("ns", "b", 1), true)
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "a")))
		assert.Equal(t, 1, rec.countOf(req("ns", "b")))
		require.NoError(t, r.stop())
	})
}

// blockingReconciler blocks the reconcile of the request named "block"
// until release is closed.
func blockingReconciler(release <-chan struct{}) *recorder {
	return &recorder{fn: func(_ context.Context, r controller.Request, n int) (controller.Result, error) {
		if r.Name == "block" && n == 1 {
			<-release
		}
		return controller.Result{}, nil
	}}
}

func TestManyEventsWhileQueuedGiveOneReconcile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rec := blockingReconciler(release)
		r := startController(t, controller.Options{Reconciler: rec}, true)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "block", 1), false) // occupies the only worker
		synctest.Wait()
		for i := range 100 {
			w := testWidget("ns", "a", int64(i))
			r.informer.Update(w, w)
		}
		close(release)
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "a")), "100 events for a waiting key: one reconcile")
		require.NoError(t, r.stop())
	})
}

func TestChangeDuringReconcileGivesExactlyOneMore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		rec := blockingReconciler(release)
		r := startController(t, controller.Options{Reconciler: rec, MaxConcurrentReconciles: 4}, true)
		synctest.Wait()
		w := testWidget("ns", "block", 1)
		r.informer.Add(w, false)
		synctest.Wait()
		require.Equal(t, 1, rec.countOf(req("ns", "block")))
		for range 50 {
			r.informer.Update(w, w) // while it is being reconciled
		}
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "block")), "not reconciled twice at once, even with idle workers")
		close(release)
		synctest.Wait()
		assert.Equal(t, 2, rec.countOf(req("ns", "block")), "the changes are not lost: exactly one more reconcile")
		require.NoError(t, r.stop())
	})
}

func TestErrorIsRetriedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, _ controller.Request, n int) (controller.Result, error) {
			if n <= 4 {
				return controller.Result{RequeueAfter: time.Hour}, errors.New("boom") // Result ignored on error
			}
			return controller.Result{}, nil
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		start := time.Now()
		r.informer.Add(testWidget("ns", "a", 1), false)
		time.Sleep(time.Hour)
		synctest.Wait()

		got := offsets(start, rec.times(req("ns", "a")))
		// 4 failures, then success: backoff 1s, 2s, 4s, 8s between calls.
		assert.Equal(t, []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second}, got)
		assert.Equal(t, 0, limiter.NumRequeues(req("ns", "a")), "success forgets the failures")
		require.NoError(t, r.stop())
	})
}

func TestBackoffRestartsAfterSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Calls 1,2 fail, 3 succeeds, 4 (a new event) fails, 5 succeeds.
		rec := &recorder{fn: func(_ context.Context, _ controller.Request, n int) (controller.Result, error) {
			if n == 1 || n == 2 || n == 4 {
				return controller.Result{}, errors.New("boom")
			}
			return controller.Result{}, nil
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		start := time.Now()
		w := testWidget("ns", "a", 1)
		r.informer.Add(w, false)
		time.Sleep(time.Minute)
		r.informer.Update(w, w)
		time.Sleep(time.Minute)
		synctest.Wait()
		got := offsets(start, rec.times(req("ns", "a")))
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second, time.Minute, time.Minute + time.Second}, got,
			"after a success the backoff starts again at the base delay")
		require.NoError(t, r.stop())
	})
}

func TestTerminalErrorIsNotRequeued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(context.Context, controller.Request, int) (controller.Result, error) {
			return controller.Result{Requeue: true}, fmt.Errorf("bad spec: %w", controller.TerminalError(errors.New("invalid")))
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		w := testWidget("ns", "a", 1)
		r.informer.Add(w, false)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "a")), "a terminal error is not retried")
		assert.Equal(t, 0, limiter.NumRequeues(req("ns", "a")), "and its backoff is forgotten")

		r.informer.Update(w, w)
		synctest.Wait()
		assert.Equal(t, 2, rec.countOf(req("ns", "a")), "a new event still reconciles it")
		require.NoError(t, r.stop())
	})
}

func TestRequeueAfterIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, _ controller.Request, n int) (controller.Result, error) {
			switch n {
			case 1, 3:
				return controller.Result{}, errors.New("boom")
			case 2:
				return controller.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return controller.Result{}, nil
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		start := time.Now()
		r.informer.Add(testWidget("ns", "a", 1), false)
		time.Sleep(time.Hour)
		synctest.Wait()
		got := offsets(start, rec.times(req("ns", "a")))
		// fail (+1s), RequeueAfter (+30s), fail: the backoff restarted at 1s
		// because RequeueAfter forgot the first failure.
		assert.Equal(t, []time.Duration{0, time.Second, 31 * time.Second, 32 * time.Second}, got)
		require.NoError(t, r.stop())
	})
}

func TestRequeueUsesTheRateLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, _ controller.Request, n int) (controller.Result, error) {
			return controller.Result{Requeue: n < 3}, nil
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		start := time.Now()
		r.informer.Add(testWidget("ns", "a", 1), false)
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, offsets(start, rec.times(req("ns", "a"))))
		require.NoError(t, r.stop())
	})
}

func TestPanicIsRecoveredAndRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{fn: func(_ context.Context, _ controller.Request, n int) (controller.Result, error) {
			if n == 1 {
				panic("nil map")
			}
			return controller.Result{}, nil
		}}
		limiter := workqueue.NewItemExponentialFailureRateLimiter[controller.Request](time.Second, time.Minute)
		r := startController(t, controller.Options{Reconciler: rec, RateLimiter: limiter}, true)
		synctest.Wait()
		start := time.Now()
		r.informer.Add(testWidget("ns", "a", 1), false)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []time.Duration{0, time.Second}, offsets(start, rec.times(req("ns", "a"))),
			"the panic counted as an error: retried after the backoff")
		require.NoError(t, r.stop())
	})
}

func TestGracefulStopLetsTheReconcileInProgressFinish(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var finished atomic.Bool
		var sawCancel atomic.Bool
		rec := &recorder{fn: func(ctx context.Context, r controller.Request, _ int) (controller.Result, error) {
			if r.Name == "slow" {
				<-ctx.Done()
				sawCancel.Store(true)
				<-release
				finished.Store(true)
			}
			return controller.Result{}, nil
		}}
		r := startController(t, controller.Options{Reconciler: rec}, true)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "slow", 1), false)
		r.informer.Add(testWidget("ns", "queued", 1), false)
		synctest.Wait()

		r.cancel()
		synctest.Wait()
		select {
		case err := <-r.done:
			t.Fatalf("Start returned (%v) while a reconcile was in progress", err)
		default:
		}
		assert.True(t, sawCancel.Load(), "the reconcile's context is cancelled")

		close(release)
		require.NoError(t, <-r.done)
		assert.True(t, finished.Load(), "the reconcile in progress ran to completion")
		assert.Equal(t, 0, rec.countOf(req("ns", "queued")), "no new work is started after the stop")
		assert.Equal(t, 0, r.informer.Handlers(), "the handler is removed on stop")
	})
}

func TestStartWaitsForSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := startController(t, controller.Options{Reconciler: rec}, false)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "a", 1), true)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, 0, rec.countOf(req("ns", "a")), "no reconcile before the caches have synced")

		r.informer.SetSynced(true)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "a")), "events queued during the sync are reconciled after it")
		require.NoError(t, r.stop())
	})
}

func TestCacheSyncTimeout(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"default", 0, controller.DefaultCacheSyncTimeout},
		{"set", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				r := startController(t, controller.Options{Reconciler: &recorder{}, CacheSyncTimeout: tc.timeout}, false)
				err := <-r.done
				require.ErrorIs(t, err, controller.ErrCacheSyncTimeout)
				assert.Equal(t, tc.want, time.Since(start))
				assert.Equal(t, 0, r.informer.Handlers(), "the handler is removed")
				r.cancel()
			})
		})
	}
}

func TestStopDuringSyncIsNotAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startController(t, controller.Options{Reconciler: &recorder{}}, false)
		time.Sleep(time.Second)
		assert.NoError(t, r.stop())
	})
}

func TestPredicatesFilterEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := startController(t, controller.Options{Reconciler: rec}, true,
			controller.GenerationChanged[*widget.Widget]())
		synctest.Wait()
		a := req("ns", "a")
		r.informer.Add(testWidget("ns", "a", 1), true)
		synctest.Wait()
		require.Equal(t, 1, rec.countOf(a))

		r.informer.Update(testWidget("ns", "a", 1), testWidget("ns", "a", 1)) // status-only: dropped
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(a))

		r.informer.Update(testWidget("ns", "a", 1), testWidget("ns", "a", 2)) // spec change
		synctest.Wait()
		assert.Equal(t, 2, rec.countOf(a))

		r.informer.Delete(testWidget("ns", "a", 2), true)
		synctest.Wait()
		assert.Equal(t, 3, rec.countOf(a), "deletes pass, tombstones included")
		require.NoError(t, r.stop())
	})
}

func TestNewValidatesOptions(t *testing.T) {
	ok := controller.ReconcileFunc(func(context.Context, controller.Request) (controller.Result, error) {
		return controller.Result{}, nil
	})
	for _, tc := range []struct {
		name string
		opts controller.Options
	}{
		{"no name", controller.Options{Reconciler: ok}},
		{"no reconciler", controller.Options{Name: "x"}},
		{"negative workers", controller.Options{Name: "x", Reconciler: ok, MaxConcurrentReconciles: -1}},
		{"negative timeout", controller.Options{Name: "x", Reconciler: ok, CacheSyncTimeout: -time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := controller.New(tc.opts)
			assert.ErrorIs(t, err, controller.ErrInvalidOptions)
		})
	}
	c, err := controller.New(controller.Options{Name: "x", Reconciler: ok})
	require.NoError(t, err)
	assert.Equal(t, "x", c.Name())
}

func TestStartTwiceAndWatchAfterStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := startController(t, controller.Options{Reconciler: &recorder{}}, true)
		synctest.Wait()
		assert.ErrorIs(t, r.ctrl.Start(context.Background()), controller.ErrAlreadyStarted)
		require.NoError(t, r.stop())
		assert.ErrorIs(t, r.ctrl.Watch(controller.Kind[*widget.Widget](&widgetInformer{}, nil)), controller.ErrStopped)
	})
}

func TestWatchOnARunningController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &recorder{}
		r := startController(t, controller.Options{Reconciler: rec}, true)
		synctest.Wait()
		late := &widgetInformer{}
		late.SetSynced(true)
		require.NoError(t, r.ctrl.Watch(controller.Kind[*widget.Widget](late, nil)))
		late.Add(testWidget("ns", "late", 1), true)
		synctest.Wait()
		assert.Equal(t, 1, rec.countOf(req("ns", "late")))
		require.NoError(t, r.stop())
		assert.Equal(t, 0, late.Handlers(), "sources added while running are stopped too")
	})
}

func offsets(start time.Time, ts []time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(start)
	}
	return out
}

// A reconcile that returns its context's error because the controller is
// stopping is logged at Info, not as a failure at Error.
func TestErrorDuringStopIsNotLoggedAsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs syncBuffer
		rec := &recorder{fn: func(ctx context.Context, r controller.Request, _ int) (controller.Result, error) {
			if r.Name == "stopped" {
				<-ctx.Done()
				return controller.Result{}, ctx.Err()
			}
			return controller.Result{}, errors.New("broken")
		}}
		logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		r := startController(t, controller.Options{Reconciler: rec, Logger: logger}, true)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "broken", 1), false)
		synctest.Wait()
		r.informer.Add(testWidget("ns", "stopped", 1), false)
		synctest.Wait()
		r.cancel()
		require.NoError(t, <-r.done)
		out := logs.String()
		assert.Contains(t, out, `level=ERROR msg="reconcile failed, requeued with backoff" controller=test namespace=ns name=broken`)
		assert.Contains(t, out, `level=INFO msg="reconcile ended by the controller's stop" controller=test namespace=ns name=stopped`)
		assert.NotContains(t, out, `level=ERROR msg="reconcile failed, requeued with backoff" controller=test namespace=ns name=stopped`)
	})
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
