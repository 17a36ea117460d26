package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
)

// TestDeletePropagation: in process as over HTTP, a delete's propagation
// policy is the registry's garbage collector finalizer on the owner
// (Foreground: kept, marked, with foregroundDeletion; Orphan: with
// orphan; Background or none: gone at once), and the client touches no
// dependent: finishing the delete is a garbage collector's job (package
// gc, whose tests run the policies end to end).
func TestDeletePropagation(t *testing.T) {
	for name, newClient := range map[string]func(*testing.T) client.Client{"local": newLocal, "http": newHTTP} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := newClient(t)
			for _, tc := range []struct {
				policy    metav1.DeletionPropagation
				finalizer string // "": the owner is gone
			}{
				{metav1.DeletePropagationForeground, metav1.FinalizerDeleteDependents},
				{metav1.DeletePropagationOrphan, metav1.FinalizerOrphanDependents},
				{metav1.DeletePropagationBackground, ""},
				{"", ""},
			} {
				name := "owner-" + strings.ToLower(string(tc.policy))
				if tc.policy == "" {
					name = "owner-none"
				}
				w := widget.NewWidget("default", name)
				require.NoError(t, c.Create(ctx, w))
				p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name + "-part"}}
				require.NoError(t, client.SetControllerReference(w, p, c.Kinds()))
				require.NoError(t, c.Create(ctx, p))

				var opts []client.DeleteOption
				if tc.policy != "" {
					opts = append(opts, client.PropagationPolicy(tc.policy))
				}
				require.NoError(t, c.Delete(ctx, w, opts...))
				var got widget.Widget
				err := c.Get(ctx, client.KeyOf(w), &got)
				if tc.finalizer == "" {
					require.True(t, client.IsNotFound(err), "%q: the owner is gone: %v", tc.policy, err)
				} else {
					require.NoError(t, err)
					require.NotNil(t, got.DeletionTimestamp, "%q: marked for deletion", tc.policy)
					require.Equal(t, []string{tc.finalizer}, got.Finalizers)
				}
				var dep widget.Part
				require.NoError(t, c.Get(ctx, client.KeyOf(p), &dep), "%q: the dependent is the collector's", tc.policy)
				require.Len(t, dep.OwnerReferences, 1)
			}
		})
	}
}
