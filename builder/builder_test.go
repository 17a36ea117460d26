package builder_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
)

// TestOwnsEnqueuesTheControllerOwner: a Part's change reconciles the
// Widget that controls it; a Part without an owner reconciles nothing. The
// same with a manager in process and over HTTP.
func TestOwnsEnqueuesTheControllerOwner(t *testing.T) {
	t.Run("local", func(t *testing.T) { testOwns(t, newEnv(t)) })
	t.Run("http", func(t *testing.T) { testOwns(t, newHTTPEnv(t)) })
}

func testOwns(t *testing.T, e *env) {
	rec, ctx := newRecorder(), testCtx(t)
	require.NoError(t, builder.ControllerManagedBy(e.m).For(&widget.Widget{}).Owns(&widget.Part{}).Complete(rec))
	e.start(t)

	w1 := widget.NewWidget("default", "w1")
	require.NoError(t, e.c.Create(ctx, w1))
	rec.expect(t, "w1") // For
	require.NoError(t, e.c.Create(ctx, part(t, e.m.GetKinds(), "orphan", nil)))
	require.NoError(t, e.c.Create(ctx, part(t, e.m.GetKinds(), "p1", w1)))
	rec.expect(t, "w1") // Owns: p1's owner, and nothing for the orphan before it

	p1 := &widget.Part{}
	require.NoError(t, e.c.Get(ctx, client.Key("default", "p1"), p1, client.FromStorage))
	p1.Spec.Color = "blue"
	require.NoError(t, e.c.Update(ctx, p1))
	rec.expect(t, "w1")
}

// TestWatchesMapsObjectsToRequests: Watches with a mapping function
// enqueues what the function returns.
func TestWatchesMapsObjectsToRequests(t *testing.T) {
	e, rec, ctx := newEnv(t), newRecorder(), testCtx(t)
	toWidget := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, obj client.Object) []controller.Request {
		if c := obj.GetLabels()["widget"]; c != "" {
			return []controller.Request{req(c)}
		}
		return nil
	})
	require.NoError(t, builder.ControllerManagedBy(e.m).Named("mapper").For(&widget.Widget{}).
		Watches(&widget.Part{}, toWidget).Complete(rec))
	e.start(t)

	require.NoError(t, e.c.Create(ctx, part(t, e.m.GetKinds(), "unmapped", nil)))
	p := part(t, e.m.GetKinds(), "p", nil)
	p.Labels = map[string]string{"widget": "target"}
	require.NoError(t, e.c.Create(ctx, p))
	rec.expect(t, "target")
}

// TestPredicates: GenerationChanged drops status-only updates; a label
// selector and a custom predicate drop what they do not match.
func TestPredicates(t *testing.T) {
	e, rec, ctx := newEnv(t), newRecorder(), testCtx(t)
	notSkipped := controller.NewPredicate(func(o client.Object) bool { return o.GetAnnotations()["skip"] != "true" })
	require.NoError(t, builder.ControllerManagedBy(e.m).
		For(&widget.Widget{}, builder.WithPredicates(controller.GenerationChanged[client.Object]())).
		WithEventFilter(controller.LabelSelectorPredicate[client.Object](labels.SelectorFromSet(labels.Set{"app": "a"}))).
		WithEventFilter(notSkipped).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(rec))
	e.start(t)

	create := func(name string, lbl map[string]string, ann map[string]string) *widget.Widget {
		w := widget.NewWidget("default", name)
		w.Labels, w.Annotations = lbl, ann
		require.NoError(t, e.c.Create(ctx, w))
		return w
	}
	create("other-app", map[string]string{"app": "b"}, nil)
	create("skipped", map[string]string{"app": "a"}, map[string]string{"skip": "true"})
	w := create("w", map[string]string{"app": "a"}, nil)
	rec.expect(t, "w") // and neither of the two before it

	w.Status.ReadyReplicas = 1
	require.NoError(t, e.c.Status().Update(ctx, w)) // generation unchanged: filtered
	// One informer delivers in order and one worker takes the queue in
	// order: had the status update enqueued w, w would come first.
	create("barrier", map[string]string{"app": "a"}, nil)
	rec.expect(t, "barrier")
	w.Spec.Replicas = 2
	require.NoError(t, e.c.Update(ctx, w)) // generation 2
	rec.expect(t, "w")
}

// TestForIsRequired: Complete without For fails.
func TestForIsRequired(t *testing.T) {
	e := newEnv(t)
	require.ErrorIs(t, builder.ControllerManagedBy(e.m).Owns(&widget.Part{}).Complete(newRecorder()), builder.ErrNoFor)
}

// TestWithOptionsMaxConcurrentReconciles: two Widgets are reconciled at
// once with MaxConcurrentReconciles 2 (each Reconcile waits for the other
// to start).
func TestWithOptionsMaxConcurrentReconciles(t *testing.T) {
	e, ctx := newEnv(t), testCtx(t)
	entered := make(chan string, 2)
	both := make(chan struct{})
	var once sync.Once
	r := controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		select {
		case entered <- req.Name:
		default: // a third Reconcile: nothing to wait for
			return controller.Result{}, nil
		}
		if len(entered) == 2 {
			once.Do(func() { close(both) })
		}
		select {
		case <-both:
		case <-ctx.Done():
		}
		return controller.Result{}, nil
	})
	require.NoError(t, builder.ControllerManagedBy(e.m).For(&widget.Widget{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).Complete(r))
	e.start(t)
	require.NoError(t, e.c.Create(ctx, widget.NewWidget("default", "a")))
	require.NoError(t, e.c.Create(ctx, widget.NewWidget("default", "b")))
	select {
	case <-both:
	case <-time.After(10 * time.Second):
		t.Fatal("the two Reconciles did not run at once")
	}
}
