package demo

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/cluster/controllers"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
)

// ControllerUIDIndex is the controllers' index name, by controller UID.
const ControllerUIDIndex = controllers.ControllerUIDIndex

// Informers are an observer's typed informers, all from one factory over
// the HTTP API: nodelifecycle's (nodes, pods by node, node leases) and
// the workloads', ReplicaSets and pods indexed by controller UID. The
// scenario's checks and the benchmark read them; the controllers have the
// manager's.
type Informers struct {
	*api.Informers
	// Deployments and ReplicaSets are the workload informers.
	Deployments *reflector.SharedIndexInformer[*appsv1.Deployment]
	ReplicaSets *reflector.SharedIndexInformer[*appsv1.ReplicaSet]
}

// NewInformers builds the informers of c's server (not started).
func NewInformers(c *api.Client, opts ...reflector.InformerOption) (*Informers, error) {
	base, err := api.NewInformers(c, opts...)
	if err != nil {
		return nil, err
	}
	inf := &Informers{Informers: base}
	if inf.Deployments, err = workloadInformer[*appsv1.Deployment](base.Factory, c, api.Deployments,
		func() runtime.Object { return &appsv1.Deployment{} }, func() runtime.Object { return &appsv1.DeploymentList{} }); err != nil {
		return nil, err
	}
	if inf.ReplicaSets, err = workloadInformer[*appsv1.ReplicaSet](base.Factory, c, api.ReplicaSets,
		func() runtime.Object { return &appsv1.ReplicaSet{} }, func() runtime.Object { return &appsv1.ReplicaSetList{} }); err != nil {
		return nil, err
	}
	if err := inf.ReplicaSets.AddIndexers(reflector.Indexers[*appsv1.ReplicaSet]{
		ControllerUIDIndex: controllerUID[*appsv1.ReplicaSet]}); err != nil {
		return nil, err
	}
	if err := inf.Pods.AddIndexers(reflector.Indexers[*corev1.Pod]{ControllerUIDIndex: controllerUID[*corev1.Pod]}); err != nil {
		return nil, err
	}
	return inf, nil
}

// workloadInformer is the factory's informer of k in every namespace.
func workloadInformer[T reflector.Object](f *reflector.InformerFactory, c *api.Client, k api.Kind,
	newObj, newList func() runtime.Object) (*reflector.SharedIndexInformer[T], error) {
	lw, err := httplw.New(httplw.Config{BaseURL: c.BaseURL(), Group: k.Group, Version: k.Version, Plural: k.Plural,
		HTTPClient: c.HTTPClient(), NewFunc: newObj, NewListFunc: newList})
	if err != nil {
		return nil, fmt.Errorf("demo: %s: %w", k.Plural, err)
	}
	return reflector.InformerFor[T](f, k.GroupVersionResource(), lw)
}

// controllerUID indexes obj by its controller's UID.
func controllerUID[T metav1.Object](obj T) ([]string, error) {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{""}, nil
}

// PodsOf returns the pods the informer knows controlled by uid.
func (i *Informers) PodsOf(uid string) []*corev1.Pod {
	ps, _ := i.Pods.GetIndexer().ByIndex(ControllerUIDIndex, uid)
	return ps
}

// ReplicaSetsOf returns the ReplicaSets the informer knows controlled by
// uid.
func (i *Informers) ReplicaSetsOf(uid string) []*appsv1.ReplicaSet {
	rss, _ := i.ReplicaSets.GetIndexer().ByIndex(ControllerUIDIndex, uid)
	return rss
}
