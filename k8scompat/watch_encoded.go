package k8scompat

import (
	"context"

	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// servesAPIClient reports whether ctx is the context of a request that
// k8s.io/apiserver's handlers serve to an API client (it carries their
// RequestInfo), whose encoders honour runtime.CacheableObject; other
// callers, such as a cacher over the Store, get the objects unwrapped.
func servesAPIClient(ctx context.Context) bool {
	_, ok := genericapirequest.RequestInfoFrom(ctx)
	return ok
}
