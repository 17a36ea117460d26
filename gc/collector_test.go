package gc_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
)

// TestBackground: deleting an owner (no policy: Background) deletes its
// dependents, and theirs; a dependent with another owner present only
// loses the gone owner's reference; an object owned by nobody stays.
func TestBackground(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w, other := e.widget("w"), e.widget("other")
		p0 := e.part("p0", refs(ref(widget.Kind, w, true)))
		p1 := e.part("p1", refs(ref(widget.PartKind, p0, false)))
		shared := e.part("shared", refs(ref(widget.Kind, w, false), ref(widget.Kind, other, false)))
		free := e.part("free", nil)

		require.NoError(t, e.c.Delete(e.ctx, w))
		e.gone(w, p0, p1)
		e.until(shared, "keeps only the reference to the owner still present", func(o client.Object) bool {
			rs := o.GetOwnerReferences()
			return len(rs) == 1 && rs[0].UID == other.UID
		})
		require.True(t, e.get(free), "owned by nobody: stays")
		require.True(t, e.get(other))
	})
}

// TestForegroundChain: an owner deleted in the foreground stays, marked,
// until its dependents are gone, down a chain (widget → part → part): the
// leaf holds (a finalizer of the test's) and blocks its owner, which
// blocks the widget; once released, the chain goes from the leaf up.
func TestForegroundChain(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w := e.widget("w")
		mid := e.part("mid", refs(ref(widget.Kind, w, true)))
		leaf := e.part("leaf", refs(ref(widget.PartKind, mid, true)), hold)

		require.NoError(t, e.c.Delete(e.ctx, w, policy(metav1.DeletePropagationForeground)))
		e.until(leaf, "marked for deletion by the collector", marked)
		e.until(mid, "marked, waiting in the foreground for the leaf", func(o client.Object) bool {
			return marked(o) && slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents)
		})
		e.until(w, "still waiting in the foreground", func(o client.Object) bool {
			return marked(o) && slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents)
		})
		e.release(leaf)
		e.gone(leaf, mid, w)
	})
}

// TestForegroundNonBlocking: a dependent without blockOwnerDeletion is
// deleted with its owner's foreground deletion but does not hold it up;
// one with it does, until it is gone.
func TestForegroundNonBlocking(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w := e.widget("w")
		loose := e.part("loose", refs(ref(widget.Kind, w, false)), hold)

		require.NoError(t, e.c.Delete(e.ctx, w, policy(metav1.DeletePropagationForeground)))
		e.gone(w)
		e.until(loose, "marked for deletion, held by its own finalizer", marked)
		e.release(loose)
		e.gone(loose)

		w2 := e.widget("w2")
		tight := e.part("tight", refs(ref(widget.Kind, w2, true)), hold)
		require.NoError(t, e.c.Delete(e.ctx, w2, policy(metav1.DeletePropagationForeground)))
		e.until(tight, "marked for deletion", marked)
		require.True(t, e.get(w2), "blocked by a dependent marked but not gone")
		e.release(tight)
		e.gone(tight, w2)
	})
}

// TestOrphan: an owner deleted with Orphan goes once its references are
// removed from its dependents, which stay.
func TestOrphan(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w, other := e.widget("w"), e.widget("other")
		only := e.part("only", refs(ref(widget.Kind, w, true)))
		both := e.part("both", refs(ref(widget.Kind, w, true), ref(widget.Kind, other, false)))

		require.NoError(t, e.c.Delete(e.ctx, w, policy(metav1.DeletePropagationOrphan)))
		e.gone(w)
		require.True(t, e.get(only))
		require.Empty(t, only.GetOwnerReferences())
		require.True(t, e.get(both))
		require.Len(t, both.GetOwnerReferences(), 1)
		require.Equal(t, other.UID, both.GetOwnerReferences()[0].UID)
	})
}

// TestUnknownKindIsPresent: an owner of a kind the collector does not
// serve is never taken as gone, even beside an owner that is: the
// dependent only loses the reference to the gone one.
func TestUnknownKindIsPresent(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		unknown := metav1.OwnerReference{APIVersion: "other.example.com/v1", Kind: "Thing", Name: "t", UID: fakeUID("000000000001")}
		gone := metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: widget.Kind, Name: "never",
			UID: fakeUID("000000000002")}
		p := e.part("p", refs(unknown, gone))
		e.until(p, "keeps the unknown kind's reference only", func(o client.Object) bool {
			rs := o.GetOwnerReferences()
			return len(rs) == 1 && rs[0].UID == unknown.UID
		})
	})
}

// TestRecreatedOwner: a dependent of an owner that was deleted and
// recreated under the same name (another UID) is collected; the new
// owner stays.
func TestRecreatedOwner(t *testing.T) {
	backends(t, func(t *testing.T, e *env) {
		w := e.widget("w")
		old := ref(widget.Kind, w, true)
		old.UID = fakeUID("000000000003") // the owner that was there before w
		p := e.part("p", refs(old))
		e.gone(p)
		require.True(t, e.get(w))
	})
}
