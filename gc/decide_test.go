package gc

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func ref(uid string, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: uid, UID: types.UID(uid), BlockOwnerDeletion: &block}
}

func TestDecide(t *testing.T) {
	states := func(m map[string]OwnerState) func(metav1.OwnerReference) OwnerState {
		return func(r metav1.OwnerReference) OwnerState { return m[string(r.UID)] }
	}
	a, b := ref("a", true), ref("b", false)
	for _, tc := range []struct {
		name   string
		refs   []metav1.OwnerReference
		states map[string]OwnerState
		want   Decision
	}{
		{"no owners: never collected", nil, nil, Decision{}},
		{"owner present", []metav1.OwnerReference{a}, map[string]OwnerState{"a": OwnerPresent}, Decision{}},
		{"owner gone: background delete", []metav1.OwnerReference{a}, map[string]OwnerState{"a": OwnerAbsent},
			Decision{Delete: true, Propagation: metav1.DeletePropagationBackground}},
		{"owner deleting in the foreground", []metav1.OwnerReference{a}, map[string]OwnerState{"a": OwnerDeletingForeground},
			Decision{Delete: true, Propagation: metav1.DeletePropagationForeground}},
		{"one of two gone: keep, drop its reference", []metav1.OwnerReference{a, b},
			map[string]OwnerState{"a": OwnerAbsent, "b": OwnerPresent}, Decision{RemoveRefs: []types.UID{"a"}}},
		{"all gone", []metav1.OwnerReference{a, b}, map[string]OwnerState{"a": OwnerAbsent, "b": OwnerAbsent},
			Decision{Delete: true, Propagation: metav1.DeletePropagationBackground}},
	} {
		require.Equal(t, tc.want, Decide(tc.refs, states(tc.states)), tc.name)
	}
}

func TestBlocking(t *testing.T) {
	refs := []metav1.OwnerReference{ref("a", true), ref("b", false)}
	require.True(t, Blocking(refs, "a"))
	require.False(t, Blocking(refs, "b"))
	require.False(t, Blocking(refs, "c"))
	require.True(t, RefersTo(refs, "b"))
	require.False(t, RefersTo(refs, "c"))
}
