package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/controller/controllertest"
)

// listQueue records what handlers enqueue.
type listQueue struct{ added []controller.Request }

func (q *listQueue) Add(r controller.Request)                       { q.added = append(q.added, r) }
func (q *listQueue) AddAfter(r controller.Request, _ time.Duration) { q.added = append(q.added, r) }

func TestEnqueueRequestForObject(t *testing.T) {
	h := controller.EnqueueRequestForObject[*widget.Widget]()
	ctx := context.Background()
	q := &listQueue{}
	h.Create(ctx, controller.CreateEvent[*widget.Widget]{Object: testWidget("ns", "a", 1)}, q)
	h.Update(ctx, controller.UpdateEvent[*widget.Widget]{ObjectOld: testWidget("ns", "old", 1), ObjectNew: testWidget("ns", "b", 1)}, q)
	h.Update(ctx, controller.UpdateEvent[*widget.Widget]{ObjectOld: testWidget("ns", "c", 1)}, q) // nil new: old is used
	h.Delete(ctx, controller.DeleteEvent[*widget.Widget]{Object: testWidget("", "cluster-scoped", 1), DeleteStateUnknown: true}, q)
	h.Create(ctx, controller.CreateEvent[*widget.Widget]{Object: nil}, q)                     // skipped
	h.Create(ctx, controller.CreateEvent[*widget.Widget]{Object: testWidget("ns", "", 1)}, q) // unnamed: skipped
	assert.Equal(t, []controller.Request{req("ns", "a"), req("ns", "b"), req("ns", "c"), req("", "cluster-scoped")}, q.added)
	assert.Equal(t, "ns/a", q.added[0].String())
}

func TestEnqueueRequestsFromMapFunc(t *testing.T) {
	// Map each widget to the widget named by its "owner" label.
	h := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, w *widget.Widget) []controller.Request {
		if owner := w.Labels["owner"]; owner != "" {
			return []controller.Request{req(w.Namespace, owner)}
		}
		return nil
	})
	owned := func(name, owner string) *widget.Widget {
		return widget.NewWidget("ns", name).WithLabels(map[string]string{"owner": owner})
	}
	q := &listQueue{}
	ctx := context.Background()
	h.Create(ctx, controller.CreateEvent[*widget.Widget]{Object: owned("x", "p1")}, q)
	h.Update(ctx, controller.UpdateEvent[*widget.Widget]{ObjectOld: owned("x", "p1"), ObjectNew: owned("x", "p2")}, q)
	h.Delete(ctx, controller.DeleteEvent[*widget.Widget]{Object: widget.NewWidget("ns", "y")}, q)
	h.Delete(ctx, controller.DeleteEvent[*widget.Widget]{}, q) // nil object: fn not called
	assert.Equal(t, []controller.Request{req("ns", "p1"), req("ns", "p1"), req("ns", "p2")}, q.added,
		"an update re-parenting x wakes both the old and the new owner")
}

func TestPredicates(t *testing.T) {
	w := func(gen int64, rv string, labels, annotations map[string]string) *widget.Widget {
		o := widget.NewWidget("ns", "a").WithLabels(labels)
		o.Generation, o.ResourceVersion, o.Annotations = gen, rv, annotations
		return o
	}
	base := w(1, "10", map[string]string{"app": "x"}, map[string]string{"note": "1"})
	update := func(p controller.Predicate[*widget.Widget], old, new *widget.Widget) bool {
		return p.Update(controller.UpdateEvent[*widget.Widget]{ObjectOld: old, ObjectNew: new})
	}
	for _, tc := range []struct {
		name string
		p    controller.Predicate[*widget.Widget]
		new  *widget.Widget
		want bool
	}{
		{"generation same", controller.GenerationChanged[*widget.Widget](), w(1, "11", nil, nil), false},
		{"generation bumped", controller.GenerationChanged[*widget.Widget](), w(2, "11", base.Labels, nil), true},
		{"labels same", controller.LabelsChanged[*widget.Widget](), w(2, "11", map[string]string{"app": "x"}, nil), false},
		{"labels changed", controller.LabelsChanged[*widget.Widget](), w(1, "11", map[string]string{"app": "y"}, nil), true},
		{"annotations same", controller.AnnotationsChanged[*widget.Widget](), w(1, "11", nil, map[string]string{"note": "1"}), false},
		{"annotations changed", controller.AnnotationsChanged[*widget.Widget](), w(1, "11", nil, nil), true},
		{"resync", controller.ResourceVersionChanged[*widget.Widget](), base, false},
		{"real update", controller.ResourceVersionChanged[*widget.Widget](), w(1, "11", nil, nil), true},
		{"not", controller.Not(controller.GenerationChanged[*widget.Widget]()), w(1, "11", nil, nil), true},
		{"or: one passes", controller.Or(controller.GenerationChanged[*widget.Widget](), controller.LabelsChanged[*widget.Widget]()),
			w(1, "11", map[string]string{"app": "y"}, nil), true},
		{"or: none pass", controller.Or(controller.GenerationChanged[*widget.Widget](), controller.LabelsChanged[*widget.Widget]()),
			w(1, "11", map[string]string{"app": "x"}, nil), false},
		{"or: empty", controller.Or[*widget.Widget](), base, false},
		{"filter on new", controller.NewPredicate(func(o *widget.Widget) bool { return o.Labels["app"] == "y" }),
			w(1, "11", map[string]string{"app": "y"}, nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, update(tc.p, base, tc.new))
		})
	}

	changed := controller.GenerationChanged[*widget.Widget]()
	assert.True(t, changed.Create(controller.CreateEvent[*widget.Widget]{Object: base}), "creates pass")
	assert.True(t, changed.Delete(controller.DeleteEvent[*widget.Widget]{Object: base}), "deletes pass")
	assert.True(t, update(changed, nil, base), "an update with a nil side passes rather than panics")
}

func TestTerminalError(t *testing.T) {
	inner := errors.New("invalid spec")
	err := controller.TerminalError(inner)
	assert.ErrorIs(t, err, controller.ErrTerminal)
	assert.ErrorIs(t, err, inner)
	assert.ErrorIs(t, errors.Join(errors.New("other"), err), controller.ErrTerminal, "found through wrapping")
	assert.NotErrorIs(t, inner, controller.ErrTerminal)
	assert.Equal(t, "terminal error: invalid spec", err.Error())
	assert.Equal(t, "terminal error", controller.TerminalError(nil).Error())
}

func TestKindSource(t *testing.T) {
	inf := &controllertest.FakeInformer[*widget.Widget]{}
	src := controller.Kind[*widget.Widget](inf, nil)
	assert.False(t, src.HasSynced(), "not started")
	q := &listQueue{}
	require.NoError(t, src.Start(context.Background(), q))
	assert.ErrorIs(t, src.Start(context.Background(), q), controller.ErrSourceStarted)
	assert.False(t, src.HasSynced(), "informer not synced")
	inf.SetSynced(true)
	assert.True(t, src.HasSynced())

	inf.Add(testWidget("ns", "a", 1), true)
	assert.Equal(t, []controller.Request{req("ns", "a")}, q.added)

	require.NoError(t, src.Stop())
	assert.Equal(t, 0, inf.Handlers())
	assert.NoError(t, src.Stop(), "a second Stop is a no-op")
	assert.False(t, src.HasSynced(), "a stopped source is not synced")
}
