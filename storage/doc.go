// Package storage defines the contract every listwatch store implements: the
// etcd-backed store in storage/etcd3 and the in-memory cacher in cacher.
//
// The contract mirrors Kubernetes' k8s.io/apiserver/pkg/storage.Interface:
// objects are runtime.Objects encoded with a runtime.Codec, keys are paths
// below a resource prefix, and resource versions (RVs) are etcd revisions.
// An object's metadata.resourceVersion is the revision of its last write; a
// list's resourceVersion is the revision at which it was read.
//
// Resource-version semantics for reads and watches (an RV is parsed once,
// where a request enters the process, into the RV value carried by
// GetOptions and ListOptions: RV "" is the zero RV, "0" is RVAny, N is
// RVAt(N)):
//
//	request   RV ""                 RV "0"                    RV=N NotOlderThan        RV=N Exact
//	Get       latest (linearizable) any (cache may serve)     at least N               -
//	GetList   latest (linearizable) any, cheapest             at least N               exactly N (410 if compacted)
//	Watch     state + changes (*)   state + changes (*)       events strictly after N  -
//
// (*) SendInitialEvents=false starts from "now" instead, without the state;
// SendInitialEvents=true sends a state not older than the RV, then a
// BOOKMARK annotated with InitialEventsAnnotationKey.
//
// Errors are *Error values whose Code can be tested with errors.Is against the
// sentinels (ErrNotFound, ErrGone, ...). *Error also implements
// Status() (apierrors.APIStatus) so k8s.io/apimachinery/pkg/api/errors helpers and the HTTP layer
// map it to the Kubernetes status code and reason.
//
// Watches deliver k8s.io/apimachinery/pkg/watch.Event values. A watch that can
// no longer honour its guarantees sends one watch.Error event carrying a
// *metav1.Status (410 Expired when etcd compacted the requested revision) and
// then closes its result channel.
package storage
