package server

import (
	"context"
	"fmt"
	"math"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkResourceVersionRange answers a resourceVersion beyond any etcd
// revision (above 2^63-1, which the store cannot even parse) as Kubernetes
// answers a too-new one: 504 "Too large resource version", with the current
// revision, instead of a 400.
func checkResourceVersionRange(ctx context.Context, r *resource, rv string) error {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n <= math.MaxInt64 {
		return nil
	}
	cur, err := r.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", n, cur), 1)
	st.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return st
}
