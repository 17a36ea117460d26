package controllers

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	nodecontroller "github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/manager"
)

// ManagerConfig configures one replica of the controller manager.
type ManagerConfig struct {
	// API reaches the API server. Required.
	API *api.Client
	// HTTPClient is what the manager's client and cache send requests
	// through; nil means API's.
	HTTPClient *http.Client
	// Etcd is the client leader election uses. Required.
	Etcd *clientv3.Client
	// ElectionKey is the election's etcd key; "" means
	// "/leader/kube-controller-manager".
	ElectionKey string
	// Identity names the replica (in etcd and logs). Required.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod time the election (see
	// manager.LeaderElection); zero takes its defaults.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Workers is each controller's concurrency; 0 means 5.
	Workers int
	// Monitor, Grace and Rates configure the node lifecycle controller
	// (see examples/nodelifecycle/controller.Config).
	Monitor, Grace time.Duration
	Rates          nodecontroller.Rates
	// OnEvent and OnEvict, when set, get the node lifecycle controller's
	// and the taint manager's reports.
	OnEvent func(nodecontroller.Event)
	OnEvict func(taint.Eviction)
	// Logger receives the replica's logs; nil means slog.Default().
	Logger *slog.Logger
}

// ControllerManager is one replica of the controller manager: a
// manager.Manager (its cache of deployments, replicasets, pods, nodes and
// leases warm on every replica) whose leader runs the Deployment and
// ReplicaSet controllers, built with package builder, the manager's
// garbage collector (package gc) over the same kinds, and nodelifecycle's
// node lifecycle controller and taint manager, which read the cache's
// informers through typed views (cache.InformerOf).
type ControllerManager struct {
	// Manager runs it (Run) and says who leads (IsLeader, Elected).
	Manager *manager.Manager
	// ReplicaSets is its ReplicaSet controller (Created counts pods).
	ReplicaSets *ReplicaSetController
	// NodeInformers are the typed views of the manager cache's
	// informers that nodelifecycle's controllers read.
	NodeInformers *api.Informers
}

// Kinds are the kinds the manager's client and cache serve: apps/v1
// Deployment and ReplicaSet, core/v1 Pod and Node, coordination.k8s.io/v1
// Lease.
func Kinds() (*client.Kinds, error) {
	s := runtime.NewScheme()
	for gv, objs := range map[schema.GroupVersion][]runtime.Object{
		appsv1.SchemeGroupVersion:         {&appsv1.Deployment{}, &appsv1.DeploymentList{}, &appsv1.ReplicaSet{}, &appsv1.ReplicaSetList{}},
		corev1.SchemeGroupVersion:         {&corev1.Pod{}, &corev1.PodList{}, &corev1.Node{}, &corev1.NodeList{}},
		coordinationv1.SchemeGroupVersion: {&coordinationv1.Lease{}, &coordinationv1.LeaseList{}},
	} {
		s.AddKnownTypes(gv, objs...)
	}
	kinds, err := client.NewKinds(s)
	if err != nil {
		return nil, err
	}
	if err := kinds.SetClusterScoped(&corev1.Node{}); err != nil {
		return nil, err
	}
	return kinds, nil
}

// NewControllerManager builds a replica; Run runs it.
func NewControllerManager(cfg ManagerConfig) (*ControllerManager, error) {
	if cfg.API == nil || cfg.Etcd == nil || cfg.Identity == "" {
		return nil, errors.New("controllers: ManagerConfig.API, Etcd and Identity are required")
	}
	if cfg.ElectionKey == "" {
		cfg.ElectionKey = "/leader/kube-controller-manager"
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = cfg.API.HTTPClient()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger.With("replica", cfg.Identity)
	kinds, err := Kinds()
	if err != nil {
		return nil, err
	}
	m, err := manager.New(manager.Options{Name: "kube-controller-manager", Kinds: kinds, Logger: log,
		ServerURL: cfg.API.BaseURL(), HTTPClient: cfg.HTTPClient, GarbageCollector: true,
		LeaderElection: &manager.LeaderElection{Client: cfg.Etcd, Key: cfg.ElectionKey, Identity: cfg.Identity,
			LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}})
	if err != nil {
		return nil, err
	}
	b, err := newBase(Config{Manager: m, Workers: cfg.Workers})
	if err != nil {
		return nil, err
	}
	cm := &ControllerManager{Manager: m}
	if cm.ReplicaSets, err = setupReplicaSets(b); err != nil {
		return nil, err
	}
	if _, err := setupDeployments(b); err != nil {
		return nil, err
	}
	if err := cm.addNodeControllers(cfg, log); err != nil {
		return nil, err
	}
	return cm, nil
}

// addNodeControllers adds nodelifecycle's controllers, leader-only, over
// the manager cache's informers of nodes, pods and leases: the kinds are
// listed and watched once per replica, by the cache that every replica
// keeps warm.
func (cm *ControllerManager) addNodeControllers(cfg ManagerConfig, log *slog.Logger) error {
	inf, err := api.InformersOf(cm.Manager.GetCache())
	if err != nil {
		return err
	}
	cm.NodeInformers = inf
	nodes, err := nodecontroller.New(nodecontroller.Config{Client: cfg.API, Informers: inf,
		MonitorPeriod: cfg.Monitor, GracePeriod: cfg.Grace, Rates: cfg.Rates, OnEvent: cfg.OnEvent, Logger: log})
	if err != nil {
		return err
	}
	taints, err := taint.New(taint.Config{Client: cfg.API, Informers: inf, OnEvict: cfg.OnEvict, Logger: log})
	if err != nil {
		return err
	}
	return errors.Join(cm.Manager.Add(manager.RunnableFunc(nodes.Run)), cm.Manager.Add(manager.RunnableFunc(taints.Run)))
}

// Run runs the replica until ctx ends or it loses leadership
// (manager.ErrLeadershipLost: a replica that lost it should exit).
func (cm *ControllerManager) Run(ctx context.Context) error { return cm.Manager.Run(ctx) }
