package controllers

import (
	"context"
	"errors"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	nodecontroller "github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
)

// ManagerConfig configures one replica of the controller manager.
type ManagerConfig struct {
	// Client reaches the API. Required.
	Client *api.Client
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

// ControllerManager is one replica of the controller manager: shared
// informers (warm on every replica) and, on the leader only, the
// Deployment, ReplicaSet, garbage-collector, node lifecycle and taint
// eviction controllers.
type ControllerManager struct {
	// Manager runs it (Run) and says who leads (IsLeader, Elected).
	Manager *manager.Manager
	// Informers are its shared informers.
	Informers *Informers
	// ReplicaSets is its ReplicaSet controller (Created counts pods).
	ReplicaSets *ReplicaSetController
}

// NewControllerManager builds a replica; Run runs it.
func NewControllerManager(cfg ManagerConfig) (*ControllerManager, error) {
	if cfg.Client == nil || cfg.Etcd == nil || cfg.Identity == "" {
		return nil, errors.New("controllers: ManagerConfig.Client, Etcd and Identity are required")
	}
	if cfg.ElectionKey == "" {
		cfg.ElectionKey = "/leader/kube-controller-manager"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	log := cfg.Logger.With("replica", cfg.Identity)
	inf, err := NewInformers(cfg.Client)
	if err != nil {
		return nil, err
	}
	m, err := manager.New(manager.Options{Name: "kube-controller-manager", Informers: inf.Factory, Logger: log,
		LeaderElection: &manager.LeaderElection{Client: cfg.Etcd, Key: cfg.ElectionKey, Identity: cfg.Identity,
			LeaseDuration: cfg.LeaseDuration, RenewDeadline: cfg.RenewDeadline, RetryPeriod: cfg.RetryPeriod}})
	if err != nil {
		return nil, err
	}
	cc := Config{Client: cfg.Client, Informers: inf, Workers: cfg.Workers, Logger: log}
	cm := &ControllerManager{Manager: m, Informers: inf, ReplicaSets: NewReplicaSetController(cc)}
	rs, err := cm.ReplicaSets.Controller()
	if err != nil {
		return nil, err
	}
	deploy, err := NewDeploymentController(cc).Controller()
	if err != nil {
		return nil, err
	}
	gcs, err := NewGarbageCollector(cc).Controllers()
	if err != nil {
		return nil, err
	}
	nodes, err := nodecontroller.New(nodecontroller.Config{Client: cfg.Client, Informers: inf.Informers,
		MonitorPeriod: cfg.Monitor, GracePeriod: cfg.Grace, Rates: cfg.Rates, OnEvent: cfg.OnEvent, Logger: log})
	if err != nil {
		return nil, err
	}
	taints, err := taint.New(taint.Config{Client: cfg.Client, Informers: inf.Informers, OnEvict: cfg.OnEvict, Logger: log})
	if err != nil {
		return nil, err
	}
	fresh := map[api.Kind]syncedTo{api.Pods: inf.Pods.LastSyncResourceVersion,
		api.ReplicaSets: inf.ReplicaSets.LastSyncResourceVersion, api.Deployments: inf.Deployments.LastSyncResourceVersion}
	runnables := []manager.Runnable{
		afterFresh(cfg.Client, fresh, rs), afterFresh(cfg.Client, fresh, deploy),
		manager.RunnableFunc(nodes.Run), manager.RunnableFunc(taints.Run),
	}
	for _, g := range gcs {
		runnables = append(runnables, afterFresh(cfg.Client, fresh, g))
	}
	for _, r := range runnables {
		if err := m.Add(r); err != nil {
			return nil, err
		}
	}
	return cm, nil
}

// afterFresh starts c once the informers are fresh (see WaitFresh).
func afterFresh(c *api.Client, fresh map[api.Kind]syncedTo, ctrl *controller.Controller) manager.Runnable {
	return manager.RunnableFunc(func(ctx context.Context) error {
		if err := WaitFresh(ctx, c, fresh); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		return ctrl.Start(ctx)
	})
}

// Run runs the replica until ctx ends or it loses leadership
// (manager.ErrLeadershipLost: a replica that lost it should exit).
func (cm *ControllerManager) Run(ctx context.Context) error { return cm.Manager.Run(ctx) }
