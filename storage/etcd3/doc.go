// Package etcd3 implements storage.Interface on etcd v3 through clientv3,
// with the semantics of Kubernetes' etcd3 store.
//
// Keys: every key passed to a method starts with Config.ResourcePrefix and
// "/" (for example "/widgets/ns/w1" below "/widgets"; recursive lists and
// watches may also name "/widgets"); the etcd key is Config.Prefix joined
// with it. Other keys, empty keys and keys with "." or ".." segments are
// rejected with storage.ErrInvalidArgument before anything reaches etcd,
// with Kubernetes' wording.
//
// Writes: Create is a transaction on mod_revision(key) == 0, GuaranteedUpdate
// and Delete are compare-and-swap loops on the key's mod_revision, retried on
// conflict from the state the failed transaction returned. Every value goes
// through Config.Transformer with the etcd key as authenticated data. TTLs are
// implemented with leases that are shared between writes (see
// Config.LeaseReuseDuration).
//
// Reads: resource versions are etcd revisions. Get and GetList read with a
// quorum read; GetList with an Exact resource version, or with a continue
// token, ranges at that revision (storage.ErrGone once compacted). Paginated
// lists fill each page up to the limit with matching items, growing the batch
// fetched from etcd while the predicate filters items out, and return
// Kubernetes-compatible continue tokens.
//
// Watches: each Watch owns one goroutine and one etcd watch (opened with
// clientv3.WithRequireLeader, so RequestWatchProgress reaches it). The
// goroutine sends initial events (when asked), then translates etcd events,
// and closes the result channel exactly once when it exits: after Stop, after
// the caller's context is cancelled, after Store.Close, or after sending a
// final watch.Error event (compaction gives a 410 Expired status).
//
// Bookmarks: with ListOptions.ProgressNotify and Predicate.AllowWatchBookmarks
// a watch turns etcd progress notifications (periodic, or asked for with
// RequestWatchProgress) into BOOKMARK events. A notification is only passed
// on when it is known to follow every event it covers (see
// progressTrustworthy in watch_progress.go for the etcd race this guards).
//
// Errors are *storage.Error values: etcd's compaction becomes ErrGone,
// future revisions ErrTooLargeResourceVersion, "request is too large"
// ErrRequestTooLarge, leader loss and unavailable endpoints ErrUnreachable,
// deadlines ErrTimeout; values the transformer or codec reject are
// ErrCorruptObj naming the key. A cancelled context is returned wrapped.
//
// Outages: every etcd request is bounded by Config.RequestTimeout (10 s);
// one that gets no answer fails with ErrUnavailable (an ErrUnreachable)
// whose message names the endpoints and the last dial or RPC error, and
// while etcd stays unreachable with the client disconnected, later
// requests fail at once (asking the client to reconnect now, at most every
// 500 ms). ReadinessCheck reports the outage; the loss and the return of
// etcd are logged once each. Build the client with etcdrun.Connect for a
// reconnect backoff of at most 1 s and keepalives that find a frozen etcd.
//
// Watch start points follow Kubernetes: RV "" or "0" sends the current state
// as ADDED events first, unless SendInitialEvents is false (then the watch
// starts after the current revision); SendInitialEvents=true serves a state
// not older than the RV and ends it with the annotated bookmark; RV N
// delivers the events after N.
//
// Differences from Kubernetes' etcd3 store: Exact lists need a non-zero RV;
// an update function returning a nil TTL keeps the key's lease; a progress
// notification becomes a bookmark only with Predicate.AllowWatchBookmarks.
//
// Compaction is not done by the Store; run a Compactor (NewCompactor) for
// that, in as many processes as you like: they coordinate through one key.
//
//	store, err := etcd3.New(etcd3.Config{
//		Client:         cli,
//		Codec:          widget.Codec,
//		NewFunc:        widget.New,
//		NewListFunc:    widget.NewList,
//		Prefix:         "/registry",
//		ResourcePrefix: "/widgets",
//	})
//	if err != nil { ... }
//	defer store.Close()
package etcd3
