package registry

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPropagationFinalizers: the finalizers a delete's policy leaves an
// object, as kube-apiserver's generic registry decides them.
func TestPropagationFinalizers(t *testing.T) {
	const (
		orphan = metav1.FinalizerOrphanDependents
		fg     = metav1.FinalizerDeleteDependents
		user   = "example.com/a"
		none   = metav1.DeletionPropagation("")
	)
	for _, tc := range []struct {
		name    string
		in      []string
		policy  metav1.DeletionPropagation
		want    []string
		changed bool
	}{
		{"no finalizers, no policy", nil, none, nil, false},
		{"no finalizers, Background", nil, metav1.DeletePropagationBackground, nil, false},
		{"no finalizers, Foreground", nil, metav1.DeletePropagationForeground, []string{fg}, true},
		{"no finalizers, Orphan", nil, metav1.DeletePropagationOrphan, []string{orphan}, true},
		{"user finalizer, no policy", []string{user}, none, []string{user}, false},
		{"user finalizer, Foreground goes last", []string{user}, metav1.DeletePropagationForeground, []string{user, fg}, true},
		{"user finalizer, Orphan goes last", []string{user}, metav1.DeletePropagationOrphan, []string{user, orphan}, true},
		{"orphan kept without a policy", []string{orphan, user}, none, []string{orphan, user}, false},
		{"foreground kept without a policy", []string{fg}, none, []string{fg}, false},
		{"Orphan again changes nothing", []string{orphan, user}, metav1.DeletePropagationOrphan, []string{orphan, user}, false},
		{"Foreground replaces orphan", []string{orphan, user}, metav1.DeletePropagationForeground, []string{user, fg}, true},
		{"Orphan replaces foreground", []string{fg}, metav1.DeletePropagationOrphan, []string{orphan}, true},
		{"Background removes both", []string{fg, user, orphan}, metav1.DeletePropagationBackground, []string{user}, true},
		{"Background removes the last", []string{fg}, metav1.DeletePropagationBackground, []string{}, true},
		{"both, no policy: the first wins", []string{fg, user, orphan}, none, []string{user, fg}, true},
		{"repeated user finalizer kept", []string{user, user}, metav1.DeletePropagationForeground, []string{user, user, fg}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), tc.in...)
			got, changed := propagationFinalizers(in, tc.policy)
			assert.Equal(t, tc.changed, changed)
			if len(tc.want) == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, tc.want, got)
			}
			assert.Equal(t, tc.in, in, "the input was changed")
		})
	}
}

// TestCheckPropagationPolicy: the known policies and none pass; anything
// else is 422 with Kubernetes' message.
func TestCheckPropagationPolicy(t *testing.T) {
	for _, p := range []metav1.DeletionPropagation{"", metav1.DeletePropagationOrphan,
		metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		assert.NoError(t, checkPropagationPolicy(p), p)
	}
	err := checkPropagationPolicy("background")
	assert.True(t, apierrors.IsInvalid(err), "%v", err)
	assert.EqualError(t, err, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "background": `+
		`supported values: "Foreground", "Background", "Orphan", "nil"`)
}
