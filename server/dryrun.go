package server

import (
	"fmt"
	"net/http"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkDryRun validates the dryRun parameter: absent, or "All" (every
// value given), as Kubernetes accepts it; anything else is 400.
func checkDryRun(values []string) error {
	for _, v := range values {
		if v != metav1.DryRunAll {
			return badRequest(fmt.Sprintf("dryRun %q is not supported: the only value is %q", v, metav1.DryRunAll))
		}
	}
	return nil
}

// isDryRun reports whether req asks for a dry run (dryRun=All): the
// request is checked and answered as usual but nothing is written.
func isDryRun(req *http.Request) bool {
	return slices.Contains(req.URL.Query()["dryRun"], metav1.DryRunAll)
}
