package api

import (
	"encoding/json"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// decodes returns a server.Resource Validate hook that refuses an object
// unless it decodes into the Go type newObj returns: what the typed
// informers decode it into. An object they could not decode would stop
// them (every list and watch of the resource failing), so the server
// refuses it as kube-apiserver refuses a body it cannot decode (400, with
// the decoder's message).
func decodes(newObj func() any) func(u *unstructured.Unstructured) error {
	return func(u *unstructured.Unstructured) error {
		data, err := json.Marshal(u.Object)
		if err != nil {
			return fmt.Errorf("encoding the object: %w", err)
		}
		return json.Unmarshal(data, newObj())
	}
}

// The Validate hooks of the example's resources.
var (
	validNode  = decodes(func() any { return &corev1.Node{} })
	validPod   = decodes(func() any { return &corev1.Pod{} })
	validLease = decodes(func() any { return &coordinationv1.Lease{} })
)
