package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
)

// TestLocalDeletePropagation: in process, Background and Foreground delete
// the dependents (recursively), Orphan removes their owner reference, and
// no policy leaves them; objects owned by nobody or another owner stay.
func TestLocalDeletePropagation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := newLocal(t)
	owner := func(name string) *widget.Widget {
		w := widget.NewWidget("default", name)
		require.NoError(t, c.Create(ctx, w))
		return w
	}
	part := func(name string, by client.Object) *widget.Part {
		p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
		if by != nil {
			require.NoError(t, client.SetControllerReference(by, p, c.Kinds()))
		}
		require.NoError(t, c.Create(ctx, p))
		return p
	}
	gone := func(name string) bool {
		return client.IsNotFound(c.Get(ctx, client.Key("default", name), &widget.Part{}))
	}

	bg := owner("bg")
	part("bg-0", bg)
	nested := part("bg-1", bg)
	part("bg-1-0", nested) // a Part may own a Part: deleted with its owner
	part("free", nil)
	require.NoError(t, c.Delete(ctx, bg, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.True(t, gone("bg-0") && gone("bg-1") && gone("bg-1-0"))
	require.False(t, gone("free"))

	fg := owner("fg")
	part("fg-0", fg)
	require.NoError(t, c.Delete(ctx, fg, client.PropagationPolicy(metav1.DeletePropagationForeground)))
	require.True(t, gone("fg-0"))
	require.True(t, client.IsNotFound(c.Get(ctx, client.KeyOf(fg), &widget.Widget{})))

	or := owner("or")
	part("or-0", or)
	require.NoError(t, c.Delete(ctx, or, client.PropagationPolicy(metav1.DeletePropagationOrphan)))
	var orphan widget.Part
	require.NoError(t, c.Get(ctx, client.Key("default", "or-0"), &orphan))
	require.Empty(t, orphan.OwnerReferences)

	none := owner("none")
	part("none-0", none)
	require.NoError(t, c.Delete(ctx, none))
	var kept widget.Part
	require.NoError(t, c.Get(ctx, client.Key("default", "none-0"), &kept))
	require.Len(t, kept.OwnerReferences, 1, "no policy: no garbage collector")
}
