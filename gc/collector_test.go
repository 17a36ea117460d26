package gc_test

import (
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
	e := start(t)
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
}

// TestUnknownKindIsPresent: an owner of a kind the collector does not
// serve is never taken as gone, even beside an owner that is: the
// dependent only loses the reference to the gone one.
func TestUnknownKindIsPresent(t *testing.T) {
	e := start(t)
	unknown := metav1.OwnerReference{APIVersion: "other.example.com/v1", Kind: "Thing", Name: "t", UID: fakeUID("000000000001")}
	gone := metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: widget.Kind, Name: "never",
		UID: fakeUID("000000000002")}
	p := e.part("p", refs(unknown, gone))
	e.until(p, "keeps the unknown kind's reference only", func(o client.Object) bool {
		rs := o.GetOwnerReferences()
		return len(rs) == 1 && rs[0].UID == unknown.UID
	})
}

// TestRecreatedOwner: a dependent of an owner that was deleted and
// recreated under the same name (another UID) is collected; the new
// owner stays.
func TestRecreatedOwner(t *testing.T) {
	e := start(t)
	w := e.widget("w")
	old := ref(widget.Kind, w, true)
	old.UID = fakeUID("000000000003") // the owner that was there before w
	p := e.part("p", refs(old))
	e.gone(p)
	require.True(t, e.get(w))
}
