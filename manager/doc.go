// Package manager runs several controllers over shared informers in one
// process, in the style of controller-runtime's Manager: leader election
// on etcd, health and readiness probes, a leader-status metric, and a
// graceful shutdown.
//
// # Use
//
//	kinds, err := client.NewKinds(widget.Scheme)
//	m, err := manager.New(manager.Options{
//		Name:           "widget-controllers",
//		Kinds:          kinds,
//		Etcd:           etcdClient, // or ServerURL: "http://apiserver:8080"
//		LeaderElection: &manager.LeaderElection{Key: "/leader/widget-controllers"},
//		Registerer:     prometheus.DefaultRegisterer,
//	})
//	err = builder.ControllerManagedBy(m).For(&widget.Widget{}).Owns(&widget.Part{}).Complete(r)
//	http.Handle("/", m.ProbeHandler()) // /healthz and /readyz
//	err = m.Run(ctx) // blocks until ctx ends or leadership is lost
//
// # What the manager owns
//
// With Options.Etcd the manager makes, for each kind its client or cache
// first uses, an etcd3 store, a cacher over it and a registry.Store (the
// write rules); with Options.Storage it uses, runs and closes the storage
// given for a kind instead; with Options.ServerURL its client and informers
// talk HTTP, through one package transport Transport: one client-side rate
// limit (Options.QPS, Options.Burst; client-go's 5 and 10 by default) for
// all of them, and 429s sent again after their Retry-After.
// GetClient reads the kinds its cache watches from the cache and the rest
// from storage, and writes through the registry (or the server). GetCache
// makes and holds one informer per kind (the builder's For, Owns and
// Watches use it). Options.GarbageCollector adds package gc's collector,
// leader-only, over the kinds the manager serves: it finishes the deletes
// begun with a propagation policy through any client of the storage.
//
// Run starts, in order: the cachers (waiting until each has loaded its
// first list), the cache's informers (on every replica: a standby keeps
// warm caches), the Runnables whose NeedLeaderElection method returns
// false, and, once elected (at once without leader election) and once its
// cache is fresh (below), the leader-only Runnables (controllers). When
// ctx ends it stops them in the reverse order and returns once every
// goroutine has ended and every store it made is closed.
//
// # A new leader acts on fresh caches
//
// A standby's informers run before it is elected, but may still lack the
// last writes of the leader it replaces: its watch is a little behind, and
// what a controller remembers of its own writes (expectations) starts
// empty in a new process, so acting on that cache could, for example,
// create again the pods the old leader created just before it stopped.
// So between winning the election and starting the leader-only Runnables
// the manager waits until every informer of its cache has applied its
// resource's current revision (cache.Cache.WaitFresh): the revision is
// read with a consistent list of one item (a quorum read of etcd in
// process; the API server's consistent read over HTTP), and the informer
// reaches it through events or bookmarks (SharedIndexInformer.
// StoreResourceVersion). For a resource without writes only a bookmark
// can say so: in process the manager asks the storage for a progress
// notification every 100 ms while it waits (the cachers it makes pass it
// on to its informers at once); over HTTP bookmarks come at the server's
// pace (every BookmarkInterval of a cacher, about a minute on a
// Kubernetes API server), so an informer still behind after 2 s relists
// with a consistent read. Each attempt is bounded by
// Options.FreshnessTimeout; one that runs out is logged at error level
// with the informers still behind (what they hold, what they need),
// counted in manager_cache_freshness_timeouts_total, fails /readyz
// (caches-fresh) and is retried; the Runnables keep waiting, the lease
// stays renewed. Informers made after the election (a first read of a
// new kind) are not waited for.
//
// # Leader election: etcd's concurrency package
//
// Leader election uses go.etcd.io/etcd/client/v3/concurrency: a Session
// (an etcd lease kept alive by the client) and an Election on it (each
// candidate puts a key under LeaderElection.Key attached to its lease; the
// candidate with the oldest key leads). It was chosen over
// Kubernetes-style Lease objects in the store because the lease lives in
// etcd itself: the server expires it, and with it the leader's key, at
// once and without any client's clock; a candidate is elected by a watch
// on the previous key's deletion rather than by polling; and no object
// type, codec or update-retry loop is needed for it.
//
// # Fencing: a deposed leader stops before a new one starts
//
// etcd deletes a leader's key only when its lease expires (or is revoked),
// and a lease renewed by a request sent at time t expires no earlier than
// t + LeaseDuration on the server. The leader keeps its own renewal clock:
// every RetryPeriod it renews the lease (KeepAliveOnce, with a request
// deadline) and notes the time it sent the last successful renewal. It
// cancels its controllers' context — and so stops reconciling — as soon as
// any of these happens:
//
//   - RenewDeadline (shorter than LeaseDuration) has passed since the send
//     time of the last successful renewal (etcd unreachable, partitioned,
//     overloaded);
//   - etcd answers that the lease is gone (revoked, or expired);
//   - the Session's Done channel closes (its keep-alive stream ended).
//
// It then waits for the controllers' Start to return (Reconciles in
// progress see their ctx cancelled) and Run returns ErrLeadershipLost: a
// process that lost leadership should exit and restart, as with
// controller-runtime. The next candidate is elected only after the old
// lease expires, that is not before LeaseDuration after the old leader's
// last renewal was sent, while the old leader stopped at RenewDeadline
// after it: the margin LeaseDuration - RenewDeadline is the time its
// Reconciles have to return after their ctx is cancelled. The argument
// needs no synchronised clocks, only clocks running at about the same
// rate. It does not cover a third party revoking the leader's lease (the
// leader notices that at its next renewal, up to RetryPeriod later), nor
// Reconciles that ignore ctx; writes that must never overlap can
// additionally be made conditional on the leader key's revision
// (Manager.LeaderKey) in an etcd transaction.
//
// When ctx ends, the leader stops its controllers and, with
// ReleaseOnCancel, resigns (revokes its lease) so a standby takes over at
// once; without it, the lease is left to expire and a standby takes over
// within LeaseDuration (plus etcd's expiry check, every 500 ms).
//
// # Probes and metrics
//
// ProbeHandler serves /healthz (the manager is running and has not lost
// leadership) and /readyz (the cachers are ready, every informer of the
// cache has synced, and an elected replica's wait for fresh caches has
// not run out), with ?verbose listing each check and who leads
// (read from etcd on a standby); AddHealthzCheck and AddReadyzCheck add
// checks. With Options.Registerer the gauge
// leader_election_master_status{name} (client-go's name) is 1 while this
// replica's leader-only Runnables may run and 0 otherwise, and
// manager_leader_info{name,identity} is the same with this replica's
// election identity, so that the series at 1 names the leader;
// manager_cache_freshness_waiting{name} is 1 while an elected replica
// waits for fresh caches, and manager_cache_freshness_timeouts_total{name}
// counts its attempts that ran out.
// CurrentLeader (and `cacher-demo leader`) reads who leads from etcd.
package manager
