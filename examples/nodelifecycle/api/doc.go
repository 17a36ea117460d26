// Package api is the example's view of Kubernetes' API: the resources it
// serves (core/v1 nodes and pods at /api/v1, coordination.k8s.io/v1 leases)
// over one etcd with a cacher each, a small typed REST client for writes,
// and informers over HTTP for reads. The server refuses any write that
// does not decode into the k8s.io/api type (400, kube-apiserver's
// message), so that the typed informers can always read what is stored;
// an object written behind the server's back is still logged by the
// informer's reflector, at Warn, on every list or watch it makes fail.
//
// It is the only place in the module, with the rest of examples/, that uses
// k8s.io/api: the library serves and watches any object kind, and this
// package shows it doing so for the real Kubernetes types.
package api
