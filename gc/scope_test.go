package gc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
)

// TestClusterScopedOwner: a namespaced dependent of a cluster-scoped owner
// (an unstructured kind with no namespace) is looked up and collected by
// the owner's name alone, and a foreground deletion of the owner waits
// for it; a cluster-scoped dependent of a namespaced owner is collected.
func TestClusterScopedOwner(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	gadgets := widget.GroupVersion.WithKind("Gadget")
	require.NoError(t, kinds.Add(client.Kind{GroupVersionKind: gadgets}))
	e := startWith(t, manager.Options{Name: "gc-test", Kinds: kinds, Etcd: etcd.Client, EtcdPrefix: testPrefix(t),
		GarbageCollector: true})

	gadget := func(name string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gadgets)
		u.SetName(name)
		require.NoError(t, e.c.Create(e.ctx, u))
		return u
	}
	bg, fg := gadget("bg"), gadget("fg")
	gone := metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: widget.Kind, Name: "gone", UID: fakeUID("000000000005")}
	p := e.part("p", refs(ref("Gadget", bg, true), gone))
	e.until(p, "keeps its cluster-scoped owner, drops the gone one", func(o client.Object) bool {
		rs := o.GetOwnerReferences()
		return len(rs) == 1 && rs[0].UID == bg.GetUID()
	})
	held := e.part("held", refs(ref("Gadget", fg, true)), hold)

	require.NoError(t, e.c.Delete(e.ctx, bg))
	e.gone(p)

	require.NoError(t, e.c.Delete(e.ctx, fg, policy(metav1.DeletePropagationForeground)))
	e.until(held, "marked by the foreground deletion of its owner", marked)
	require.True(t, e.get(fg.DeepCopy()), "the owner waits for its blocking dependent")
	e.release(held)
	e.gone(held, fg)

	// A cluster-scoped object cannot have a namespaced owner: such a
	// reference resolves to nothing, even with a Widget of that name.
	w := e.widget("w")
	invalid := &unstructured.Unstructured{}
	invalid.SetGroupVersionKind(gadgets)
	invalid.SetName("invalid")
	invalid.SetOwnerReferences(refs(ref(widget.Kind, w, false)))
	require.NoError(t, e.c.Create(e.ctx, invalid))
	e.gone(invalid)
	require.True(t, e.get(w))
}
