package api

import (
	"errors"
	"fmt"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/storage"
)

// Informers are the shared informers of the controller manager: nodes,
// pods (indexed by spec.nodeName) and the leases of kube-node-lease. They
// come from one factory of their own over the HTTP API (NewInformers), or
// are a manager cache's informers of those kinds (InformersOf), so that a
// controller manager that already watches pods does not watch them twice.
type Informers struct {
	// Factory starts and stops the informers; nil for InformersOf (the
	// cache runs them).
	Factory *reflector.InformerFactory
	// Nodes, Pods and Leases are the informers.
	Nodes  reflector.SharedInformer[*corev1.Node]
	Pods   reflector.SharedInformer[*corev1.Pod]
	Leases reflector.SharedInformer[*coordinationv1.Lease]
}

// InformersOf returns the informers of c, a manager's cache whose Kinds
// hold core/v1 Node and Pod and coordination.k8s.io/v1 Lease: the cache's
// one informer of each kind (its leases informer covers every namespace),
// with the pods indexed by node; the cache starts and runs them.
func InformersOf(c *cache.Cache) (*Informers, error) {
	inf := &Informers{}
	var err error
	if inf.Nodes, err = cache.InformerOf[*corev1.Node](c); err != nil {
		return nil, fmt.Errorf("api: nodes: %w", err)
	}
	if inf.Pods, err = cache.InformerOf[*corev1.Pod](c); err != nil {
		return nil, fmt.Errorf("api: pods: %w", err)
	}
	if inf.Leases, err = cache.InformerOf[*coordinationv1.Lease](c); err != nil {
		return nil, fmt.Errorf("api: leases: %w", err)
	}
	if err := inf.Pods.AddIndexers(reflector.Indexers[*corev1.Pod]{PodNodeNameIndex: podNodeName}); err != nil {
		return nil, err
	}
	return inf, nil
}

// NewInformers builds the informers of c's server; start them with
// Factory.Start.
func NewInformers(c *Client, opts ...reflector.InformerOption) (*Informers, error) {
	return NewShardInformers(c, "", opts...)
}

// NewShardInformers is NewInformers with the pods informer holding only
// the pods that podShard (a shardSelector, see UIDShards; "" is every
// pod) selects, as one instance of a sharded controller manager needs:
// nodes and leases are whole.
//
// A list or watch that fails is logged by the informer's reflector (at
// Warn, on slog.Default unless opts give a logger), naming the resource:
// an object an informer cannot decode makes every list and watch of its
// resource fail until it is fixed, and would otherwise pass in silence.
func NewShardInformers(c *Client, podShard string, opts ...reflector.InformerOption) (*Informers, error) {
	f := reflector.NewInformerFactory(opts...)
	inf := &Informers{Factory: f}
	nodes, err := informerFor[*corev1.Node](f, c, Nodes, "", "",
		func() runtime.Object { return &corev1.Node{} }, func() runtime.Object { return &corev1.NodeList{} })
	if err != nil {
		return nil, err
	}
	pods, err := informerFor[*corev1.Pod](f, c, Pods, "", podShard,
		func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} })
	if err != nil {
		return nil, err
	}
	if err := pods.AddIndexers(reflector.Indexers[*corev1.Pod]{PodNodeNameIndex: podNodeName}); err != nil {
		return nil, err
	}
	leases, err := informerFor[*coordinationv1.Lease](f, c, Leases, LeaseNamespace, "",
		func() runtime.Object { return &coordinationv1.Lease{} },
		func() runtime.Object { return &coordinationv1.LeaseList{} })
	if err != nil {
		return nil, err
	}
	inf.Nodes, inf.Pods, inf.Leases = nodes, pods, leases
	return inf, nil
}

// informerFor builds the factory's informer of k in namespace ns, of the
// shard that shard selects ("": all).
func informerFor[T reflector.Object](f *reflector.InformerFactory, c *Client, k Kind, ns, shard string,
	newObj, newList func() runtime.Object) (*reflector.SharedIndexInformer[T], error) {
	var lw reflector.ListerWatcher
	lw, err := httplw.New(httplw.Config{BaseURL: c.BaseURL(), Group: k.Group, Version: k.Version, Plural: k.Plural,
		Namespace: ns, HTTPClient: c.HTTPClient(), NewFunc: newObj, NewListFunc: newList})
	if err != nil {
		return nil, fmt.Errorf("api: %s: %w", k.Plural, err)
	}
	if shard != "" {
		if _, err := storage.ParseShardSelector(shard); err != nil {
			return nil, fmt.Errorf("api: %s: %w", k.Plural, err)
		}
		lw = reflector.TweakListOptions(lw, func(o *metav1.ListOptions) { o.ShardSelector = shard })
	}
	return reflector.InformerFor[T](f, k.GroupVersionResource(), lw)
}

// errNilPod is returned by the pod index for a nil pod.
var errNilPod = errors.New("api: nil pod")

// podNodeName indexes a pod by the node it is bound to (unbound pods are
// not indexed).
func podNodeName(p *corev1.Pod) ([]string, error) {
	if p == nil {
		return nil, errNilPod
	}
	if p.Spec.NodeName == "" {
		return nil, nil
	}
	return []string{p.Spec.NodeName}, nil
}

// PodsOnNode returns the pods the informer knows bound to node.
func (i *Informers) PodsOnNode(node string) ([]*corev1.Pod, error) {
	return i.Pods.GetIndexer().ByIndex(PodNodeNameIndex, node)
}
