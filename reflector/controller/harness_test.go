package controller_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/controller/controllertest"
)

type widgetInformer = controllertest.FakeInformer[*widget.Widget]

// call is one Reconcile the recorder saw.
type call struct {
	req controller.Request
	at  time.Time
}

// recorder is a Reconciler that records its calls and answers with fn (nil:
// success). n counts the calls for the request, from 1.
type recorder struct {
	fn func(ctx context.Context, req controller.Request, n int) (controller.Result, error)

	mu    sync.Mutex
	calls []call
	count map[controller.Request]int
}

func (r *recorder) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	r.mu.Lock()
	if r.count == nil {
		r.count = map[controller.Request]int{}
	}
	r.count[req]++
	n := r.count[req]
	r.calls = append(r.calls, call{req: req, at: time.Now()})
	r.mu.Unlock()
	if r.fn == nil {
		return controller.Result{}, nil
	}
	return r.fn(ctx, req, n)
}

// times returns the times of the calls for req.
func (r *recorder) times(req controller.Request) []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []time.Time
	for _, c := range r.calls {
		if c.req == req {
			out = append(out, c.at)
		}
	}
	return out
}

func (r *recorder) countOf(req controller.Request) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count[req]
}

func req(ns, name string) controller.Request {
	return controller.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

func testWidget(ns, name string, generation int64) *widget.Widget {
	w := widget.NewWidget(ns, name)
	w.Generation = generation
	return w
}

// running is a controller started in the background on a FakeInformer.
type running struct {
	informer *widgetInformer
	ctrl     *controller.Controller
	cancel   context.CancelFunc
	done     chan error // receives Start's result
}

// startController starts a controller watching a new FakeInformer (synced
// when synced is true) with opts (Name and Logger filled in when empty).
// The test must call stop (directly or through t.Cleanup in non-synctest
// tests).
func startController(t *testing.T, opts controller.Options, synced bool, predicates ...controller.Predicate[*widget.Widget]) *running {
	t.Helper()
	if opts.Name == "" {
		opts.Name = "test"
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c, err := controller.New(opts)
	require.NoError(t, err)
	inf := &widgetInformer{}
	inf.SetSynced(synced)
	require.NoError(t, c.Watch(controller.Kind(inf, nil, predicates...)))
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{informer: inf, ctrl: c, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- c.Start(ctx) }()
	return r
}

// stop cancels the controller and returns Start's result.
func (r *running) stop() error {
	r.cancel()
	return <-r.done
}

// waitRegistered waits until the controller has registered its handler.
func (r *running) waitRegistered(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, r.informer.WaitForHandlers(ctx, 1))
}
