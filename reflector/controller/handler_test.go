package controller_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/controller/controllertest"
)

// listQueue records what handlers enqueue.
type listQueue struct{ added []controller.Request }

func (q *listQueue) Add(r controller.Request)                       { q.added = append(q.added, r) }
func (q *listQueue) AddAfter(r controller.Request, _ time.Duration) { q.added = append(q.added, r) }

func TestEnqueueRequestForObject(t *testing.T) {
	h := controller.EnqueueRequestForObject[*testapi.Widget]()
	ctx := context.Background()
	q := &listQueue{}
	h.Create(ctx, controller.CreateEvent[*testapi.Widget]{Object: widget("ns", "a", 1)}, q)
	h.Update(ctx, controller.UpdateEvent[*testapi.Widget]{ObjectOld: widget("ns", "old", 1), ObjectNew: widget("ns", "b", 1)}, q)
	h.Update(ctx, controller.UpdateEvent[*testapi.Widget]{ObjectOld: widget("ns", "c", 1)}, q) // nil new: old is used
	h.Delete(ctx, controller.DeleteEvent[*testapi.Widget]{Object: widget("", "cluster-scoped", 1), DeleteStateUnknown: true}, q)
	h.Create(ctx, controller.CreateEvent[*testapi.Widget]{Object: nil}, q)                 // skipped
	h.Create(ctx, controller.CreateEvent[*testapi.Widget]{Object: widget("ns", "", 1)}, q) // unnamed: skipped
	assert.Equal(t, []controller.Request{req("ns", "a"), req("ns", "b"), req("ns", "c"), req("", "cluster-scoped")}, q.added)
	assert.Equal(t, "ns/a", q.added[0].String())
}

func TestEnqueueRequestsFromMapFunc(t *testing.T) {
	// Map each widget to the widget named by its "owner" label.
	h := controller.EnqueueRequestsFromMapFunc(func(_ context.Context, w *testapi.Widget) []controller.Request {
		if owner := w.Labels["owner"]; owner != "" {
			return []controller.Request{req(w.Namespace, owner)}
		}
		return nil
	})
	owned := func(name, owner string) *testapi.Widget {
		return testapi.Make("ns", name, map[string]string{"owner": owner})
	}
	q := &listQueue{}
	ctx := context.Background()
	h.Create(ctx, controller.CreateEvent[*testapi.Widget]{Object: owned("x", "p1")}, q)
	h.Update(ctx, controller.UpdateEvent[*testapi.Widget]{ObjectOld: owned("x", "p1"), ObjectNew: owned("x", "p2")}, q)
	h.Delete(ctx, controller.DeleteEvent[*testapi.Widget]{Object: testapi.Make("ns", "y", nil)}, q)
	h.Delete(ctx, controller.DeleteEvent[*testapi.Widget]{}, q) // nil object: fn not called
	assert.Equal(t, []controller.Request{req("ns", "p1"), req("ns", "p1"), req("ns", "p2")}, q.added,
		"an update re-parenting x wakes both the old and the new owner")
}

func TestPredicates(t *testing.T) {
	w := func(gen int64, rv string, labels, annotations map[string]string) *testapi.Widget {
		o := testapi.Make("ns", "a", labels)
		o.Generation, o.ResourceVersion, o.Annotations = gen, rv, annotations
		return o
	}
	base := w(1, "10", map[string]string{"app": "x"}, map[string]string{"note": "1"})
	update := func(p controller.Predicate[*testapi.Widget], old, new *testapi.Widget) bool {
		return p.Update(controller.UpdateEvent[*testapi.Widget]{ObjectOld: old, ObjectNew: new})
	}
	for _, tc := range []struct {
		name string
		p    controller.Predicate[*testapi.Widget]
		new  *testapi.Widget
		want bool
	}{
		{"generation same", controller.GenerationChanged[*testapi.Widget](), w(1, "11", nil, nil), false},
		{"generation bumped", controller.GenerationChanged[*testapi.Widget](), w(2, "11", base.Labels, nil), true},
		{"labels same", controller.LabelsChanged[*testapi.Widget](), w(2, "11", map[string]string{"app": "x"}, nil), false},
		{"labels changed", controller.LabelsChanged[*testapi.Widget](), w(1, "11", map[string]string{"app": "y"}, nil), true},
		{"annotations same", controller.AnnotationsChanged[*testapi.Widget](), w(1, "11", nil, map[string]string{"note": "1"}), false},
		{"annotations changed", controller.AnnotationsChanged[*testapi.Widget](), w(1, "11", nil, nil), true},
		{"resync", controller.ResourceVersionChanged[*testapi.Widget](), base, false},
		{"real update", controller.ResourceVersionChanged[*testapi.Widget](), w(1, "11", nil, nil), true},
		{"not", controller.Not(controller.GenerationChanged[*testapi.Widget]()), w(1, "11", nil, nil), true},
		{"or: one passes", controller.Or(controller.GenerationChanged[*testapi.Widget](), controller.LabelsChanged[*testapi.Widget]()),
			w(1, "11", map[string]string{"app": "y"}, nil), true},
		{"or: none pass", controller.Or(controller.GenerationChanged[*testapi.Widget](), controller.LabelsChanged[*testapi.Widget]()),
			w(1, "11", map[string]string{"app": "x"}, nil), false},
		{"or: empty", controller.Or[*testapi.Widget](), base, false},
		{"filter on new", controller.NewPredicate(func(o *testapi.Widget) bool { return o.Labels["app"] == "y" }),
			w(1, "11", map[string]string{"app": "y"}, nil), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, update(tc.p, base, tc.new))
		})
	}

	changed := controller.GenerationChanged[*testapi.Widget]()
	assert.True(t, changed.Create(controller.CreateEvent[*testapi.Widget]{Object: base}), "creates pass")
	assert.True(t, changed.Delete(controller.DeleteEvent[*testapi.Widget]{Object: base}), "deletes pass")
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
	inf := &controllertest.FakeInformer[*testapi.Widget]{}
	src := controller.Kind[*testapi.Widget](inf, nil)
	assert.False(t, src.HasSynced(), "not started")
	q := &listQueue{}
	require.NoError(t, src.Start(context.Background(), q))
	assert.ErrorIs(t, src.Start(context.Background(), q), controller.ErrSourceStarted)
	assert.False(t, src.HasSynced(), "informer not synced")
	inf.SetSynced(true)
	assert.True(t, src.HasSynced())

	inf.Add(widget("ns", "a", 1), true)
	assert.Equal(t, []controller.Request{req("ns", "a")}, q.added)

	require.NoError(t, src.Stop())
	assert.Equal(t, 0, inf.Handlers())
	assert.NoError(t, src.Stop(), "a second Stop is a no-op")
	assert.False(t, src.HasSynced(), "a stopped source is not synced")
}
