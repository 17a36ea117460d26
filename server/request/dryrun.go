package request

import (
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckDryRun validates the dryRun parameter: absent, or "All" (every
// value given), as Kubernetes accepts it; anything else is 400.
func CheckDryRun(values []string) error {
	for _, v := range values {
		if v != metav1.DryRunAll {
			return apierrors.NewBadRequest(fmt.Sprintf("dryRun %q is not supported: the only value is %q", v, metav1.DryRunAll))
		}
	}
	return nil
}

// IsDryRun reports whether req asks for a dry run (dryRun=All): the
// request is checked and answered as usual but nothing is written.
func IsDryRun(req *http.Request) bool {
	return slices.Contains(req.URL.Query()["dryRun"], metav1.DryRunAll)
}
