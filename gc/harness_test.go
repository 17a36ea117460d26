package gc_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
)

// waitFor bounds every wait on the collector.
const waitFor = 15 * time.Second

// env is a running manager with its garbage collector, over a fresh
// prefix of the shared etcd.
type env struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
}

// start runs a manager with GarbageCollector over widgets and parts until
// the test ends.
func start(t *testing.T) *env {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	prefix := "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
	m, err := manager.New(manager.Options{Name: "gc-test", Kinds: kinds, Etcd: etcd.Client, EtcdPrefix: prefix,
		GarbageCollector: true})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-done)
		cancel()
	})
	select {
	case <-m.Elected():
	case <-ctx.Done():
		t.Fatal("the manager did not start its leader-only runnables")
	}
	return &env{t: t, ctx: ctx, c: m.GetClient()}
}

// widget creates a Widget.
func (e *env) widget(name string) *widget.Widget {
	e.t.Helper()
	w := widget.NewWidget("default", name)
	require.NoError(e.t, e.c.Create(e.ctx, w))
	return w
}

// part creates a Part with refs as its ownerReferences and finalizers.
func (e *env) part(name string, refs []metav1.OwnerReference, finalizers ...string) *widget.Part {
	e.t.Helper()
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: refs,
		Finalizers: finalizers}}
	require.NoError(e.t, e.c.Create(e.ctx, p))
	return p
}

// ref is an ownerReference to obj (of kind), blocking its owner's
// foreground deletion when block.
func ref(kind string, obj metav1.Object, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: kind, Name: obj.GetName(),
		UID: obj.GetUID(), BlockOwnerDeletion: ptr.To(block)}
}

// refs is a list of ownerReferences.
func refs(rs ...metav1.OwnerReference) []metav1.OwnerReference { return rs }

// get reads obj's current state from storage into obj; false when gone.
func (e *env) get(obj client.Object) bool {
	e.t.Helper()
	err := e.c.Get(e.ctx, client.KeyOf(obj), obj, client.FromStorage)
	if client.IsNotFound(err) {
		return false
	}
	require.NoError(e.t, err)
	return true
}

// gone waits until every obj is gone.
func (e *env) gone(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		o := o.DeepCopyObject().(client.Object)
		require.Eventually(e.t, func() bool { return !e.get(o) }, waitFor, 5*time.Millisecond,
			"%T %s is still there", o, o.GetName())
	}
}

// until waits until cond holds of obj's current state (which must exist).
func (e *env) until(obj client.Object, what string, cond func(client.Object) bool) {
	e.t.Helper()
	o := obj.DeepCopyObject().(client.Object)
	require.Eventually(e.t, func() bool { return e.get(o) && cond(o) }, waitFor, 5*time.Millisecond,
		"%T %s: %s", o, o.GetName(), what)
}

// release removes obj's finalizers (a hold the test put on it).
func (e *env) release(obj client.Object) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { // the collector may write the object meanwhile: a conflict
		o := obj.DeepCopyObject().(client.Object)
		require.True(e.t, e.get(o))
		o.SetFinalizers(slicesWithout(o.GetFinalizers(), hold))
		err := e.c.Update(e.ctx, o)
		if !client.IsConflict(err) {
			require.NoError(e.t, err)
		}
		return err == nil
	}, waitFor, 5*time.Millisecond)
}

// hold is a finalizer of the tests: an object marked for deletion stays
// until the test releases it.
const hold = "test.listwatch.dev/hold"

func slicesWithout(s []string, drop string) []string {
	out := []string{}
	for _, x := range s {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// marked reports whether o is marked for deletion.
func marked(o client.Object) bool { return o.GetDeletionTimestamp() != nil }

// policy is a delete option with p.
func policy(p metav1.DeletionPropagation) client.DeleteOption { return client.PropagationPolicy(p) }

// fakeUID is a UID no object has.
func fakeUID(s string) types.UID { return types.UID("00000000-0000-0000-0000-" + s) }
