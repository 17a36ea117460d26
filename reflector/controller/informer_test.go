package controller_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
)

// The reflector's informer is an Informer, handler removal included.
var (
	_ controller.Informer[*widget.Widget] = (*reflector.SharedIndexInformer[*widget.Widget])(nil)
	_ interface {
		RemoveEventHandler(reflector.ResourceEventHandlerRegistration) error
	} = (*reflector.SharedIndexInformer[*widget.Widget])(nil)
)

// TestControllerOverSharedIndexInformer runs a controller on the real
// informer, fed by an in-memory ListerWatcher: the initial list is
// reconciled once per object after the sync, then watch events are.
func TestControllerOverSharedIndexInformer(t *testing.T) {
	withRV := func(w *widget.Widget, rv string) *widget.Widget {
		w.ResourceVersion = rv
		return w
	}
	watchers := make(chan *watch.FakeWatcher, 8)
	lw := reflector.ListWatchFuncs{
		ListFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &widget.WidgetList{
				ListMeta: metav1.ListMeta{ResourceVersion: "10"},
				Items: []widget.Widget{
					*withRV(testWidget("ns", "a", 1), "5"),
					*withRV(testWidget("ns", "b", 1), "6"),
				},
			}, nil
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			w := watch.NewFake()
			watchers <- w
			return w, nil
		},
	}
	factory := reflector.NewInformerFactory()
	informer, err := reflector.InformerFor[*widget.Widget](factory, widget.Resource, lw)
	require.NoError(t, err)

	rec := &recorder{}
	c, err := controller.New(controller.Options{Name: "widgets", Reconciler: rec, MaxConcurrentReconciles: 2})
	require.NoError(t, err)
	require.NoError(t, c.Watch(controller.Kind[*widget.Widget](informer, nil)))

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer factory.Shutdown()
	defer cancel()
	factory.Start(ctx)
	ctrlDone := make(chan error, 1)
	wg.Go(func() { ctrlDone <- c.Start(ctx) })

	eventually := func(cond func() bool, msg string) {
		t.Helper()
		require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
	}
	eventually(func() bool { return rec.countOf(req("ns", "a")) == 1 && rec.countOf(req("ns", "b")) == 1 },
		"every listed object is reconciled")

	var w *watch.FakeWatcher
	select {
	case w = <-watchers:
	case <-time.After(10 * time.Second):
		t.Fatal("the informer did not watch")
	}
	w.Modify(withRV(testWidget("ns", "a", 2), "11"))
	w.Add(withRV(testWidget("ns", "c", 1), "12"))
	w.Delete(withRV(testWidget("ns", "b", 1), "13"))
	eventually(func() bool {
		return rec.countOf(req("ns", "a")) == 2 && rec.countOf(req("ns", "b")) == 2 && rec.countOf(req("ns", "c")) == 1
	}, "watch events are reconciled")

	cancel()
	require.NoError(t, <-ctrlDone)
}
