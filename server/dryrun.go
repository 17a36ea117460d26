package server

import (
	"fmt"
	"net/http"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/storage"
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

// dryRunUpdate is a read-modify-write that writes nothing: mutate gets the
// current object (empty when missing and ignoreNotFound) and its result is
// returned with the current resourceVersion, as a dry-run update answers.
func (s *Server) dryRunUpdate(req *http.Request, t target, ignoreNotFound bool,
	mutate func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	cur := &unstructured.Unstructured{}
	if err := t.res.Storage.Get(req.Context(), t.objectKey(), storage.GetOptions{IgnoreNotFound: ignoreNotFound}, cur); err != nil {
		return nil, err
	}
	next, err := mutate(cur)
	if err != nil {
		return nil, err
	}
	next.SetResourceVersion(cur.GetResourceVersion())
	return next, nil
}
