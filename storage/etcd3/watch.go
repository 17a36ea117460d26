package etcd3

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Watch implements storage.Interface.
//
// Start points (decided by storage.ParseWatchRequest), as in Kubernetes:
// RV "" or "0" with SendInitialEvents unset sends the current state as
// ADDED events, then the changes after it.
// SendInitialEvents=false with RV "" or "0" starts after etcd's current
// revision, read before Watch returns, so every later write is delivered.
// SendInitialEvents=true sends the current state (which must not be older
// than the RV, else a too-large-RV error event; a compacted RV does not
// matter) as ADDED events and then, when the predicate allows bookmarks, one
// BOOKMARK annotated with storage.InitialEventsAnnotationKey carrying the
// state's RV. Otherwise RV N delivers the events after N, or a 410 error
// event when etcd has compacted N (N is older than its compact revision).
//
// Each watch owns one goroutine and one etcd watch; see the package doc for
// when it ends. Stop cancels it and waits until the goroutine has exited.
func (s *Store) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	var etcdKey string
	var err error
	if opts.Recursive {
		etcdKey, err = s.prepareRecursiveKey(key)
	} else {
		etcdKey, err = s.prepareKey(key)
	}
	if err != nil {
		return nil, err
	}
	if err := storage.CheckReachable(ctx, opts.ResourceVersion, s.GetCurrentResourceVersion); err != nil {
		return nil, err
	}
	req, err := storage.ParseWatchRequest(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(ctx, "watch")
	}
	w := &watcher{
		s: s, key: key, etcdKey: etcdKey, recursive: opts.Recursive, pred: opts.Predicate,
		progress: opts.ProgressNotify, historyEnd: -1,
		revisionEnds: opts.RevisionEndBookmarks && opts.Predicate.AllowWatchBookmarks,
		result:       make(chan watch.Event, s.watchBuffer), done: make(chan struct{}),
	}
	switch req.Start {
	case storage.WatchWithState:
		// The latest state (not older than req.Rev), then its changes.
		w.initial, w.annotate, w.minRV = true, req.Annotate, int64(req.Rev)
	case storage.WatchFromNow:
		cur, err := s.GetCurrentResourceVersion(ctx)
		if err != nil {
			return nil, err
		}
		w.startRev = int64(cur)
	default:
		w.startRev = int64(req.Rev)
	}
	wctx, cancel := context.WithCancel(ctx)
	w.ctx, w.cancel = watchStreamContext(wctx), cancel
	if err := s.register(w); err != nil {
		cancel()
		return nil, err
	}
	go w.run()
	return w, nil
}

// watchStreamContext returns ctx with exactly the gRPC metadata every
// watch of the store carries (require-leader, nothing from the caller).
// clientv3 multiplexes watches whose contexts carry equal metadata onto one
// gRPC stream, and a progress request only reaches the watches of the
// stream its own context selects: so RequestWatchProgress uses the same
// metadata to reach all of them.
func watchStreamContext(ctx context.Context) context.Context {
	return clientv3.WithRequireLeader(metadata.NewOutgoingContext(ctx, metadata.MD{}))
}

func (s *Store) register(w *watcher) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &storage.Error{Code: storage.CodeNotReady, Msg: "etcd3 store is closed"}
	}
	s.watchers[w] = struct{}{}
	return nil
}

func (s *Store) unregister(w *watcher) {
	s.mu.Lock()
	delete(s.watchers, w)
	s.mu.Unlock()
}

// watcher is one watch. Its goroutine (run) is the only sender on result
// and closes it, then done, when it exits.
type watcher struct {
	s         *Store
	key       string // the caller's key, for errors
	etcdKey   string // exact key, or prefix ending in "/" when recursive
	recursive bool
	pred      storage.SelectionPredicate
	progress  bool
	initial   bool // send the state at startRev as ADDED events first
	annotate  bool // end the initial events with an annotated bookmark (storage.WatchRequest.Annotate)
	// revisionEnds: follow every revision's events with an annotated bookmark
	// (ListOptions.RevisionEndBookmarks with bookmarks allowed).
	revisionEnds bool

	// startRev is the RV the watch starts after; 0 until the initial list
	// resolved it when the latest state was requested. Owned by run.
	startRev int64
	// minRV is the RV the initial state must not be older than (0: any).
	minRV int64
	// lastRV is the RV of the last event or bookmark sent. Owned by run.
	lastRV int64
	// createdRev is etcd's revision when it registered the watch (from the
	// creation response). Owned by run.
	createdRev int64
	// historyEnd is the revision of the last event in the watched range at
	// or before createdRev (0: none after startRev), -1 while unknown; see
	// progressTrustworthy. Owned by run.
	historyEnd int64

	ctx    context.Context    // cancelled by Stop, Store.Close or the caller
	cancel context.CancelFunc // cancels ctx
	result chan watch.Event   // events to the consumer; closed by run
	done   chan struct{}      // closed by run after result is closed

	stopOnce sync.Once
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it cancels the etcd watch and waits for
// the goroutine to exit; the result channel is closed by then. Safe to call
// more than once and concurrently.
func (w *watcher) Stop() {
	w.stopOnce.Do(w.cancel)
	<-w.done
}

func (w *watcher) run() {
	defer func() {
		w.s.unregister(w)
		w.cancel()
		close(w.result)
		close(w.done)
	}()
	if w.initial {
		if !w.sendInitial() {
			return
		}
	}
	w.lastRV = w.startRev
	// The etcd watch starts one revision early: etcd answers progress
	// requests only while no watch on the stream starts in the future, so a
	// watch from the current revision (+1) would get none, and would hold
	// them back for every other watch of the store, until the next write.
	// Events at or below startRev are skipped (sendEvents).
	// Starting at startRev also makes a watch from a compacted RV fail: etcd
	// compacted startRev exactly when startRev < its compact revision C, and
	// a watch from C-1 cannot be served exactly either, since the events at
	// C lost their previous values (a DELETE there has nothing to carry).
	wch := w.openEtcdWatch(max(w.startRev, 1))
	deadlineBookmark, stop := w.deadlineBookmarkTimer()
	defer stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-deadlineBookmark:
			// Every event up to lastRV has been sent: a bookmark there lets
			// the client resume without a relist once the deadline ends it.
			if w.lastRV > 0 && !w.sendBookmark(w.lastRV, "") {
				return
			}
		case wres, ok := <-wch:
			if !ok {
				if w.ctx.Err() == nil {
					w.sendError(&storage.Error{Code: storage.CodeUnreachable, Key: w.key, Msg: "etcd watch channel closed"})
				}
				return
			}
			if !w.handle(wres) {
				return
			}
		}
	}
}

// deadlineBookmarkTimer fires once, shortly before the watch's deadline, if
// the watch allows bookmarks and has one (storage.DeadlineBookmarkTime);
// otherwise it never fires.
func (w *watcher) deadlineBookmarkTimer() (<-chan time.Time, func() bool) {
	deadline, ok := w.ctx.Deadline()
	if !ok || !w.pred.AllowWatchBookmarks {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(time.Until(storage.DeadlineBookmarkTime(time.Now(), deadline)))
	return t.C, t.Stop
}

// openEtcdWatch opens the etcd watch of w from revision from.
func (w *watcher) openEtcdWatch(from int64) clientv3.WatchChan {
	opts := []clientv3.OpOption{clientv3.WithRev(from), clientv3.WithPrevKV(), clientv3.WithCreatedNotify()}
	if w.recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	if w.progress {
		opts = append(opts, clientv3.WithProgressNotify())
	}
	return w.s.client.Watch(w.ctx, w.etcdKey, opts...)
}

// handle processes one etcd watch response; false ends the watch.
func (w *watcher) handle(wres clientv3.WatchResponse) bool {
	if err := wres.Err(); err != nil {
		if wres.CompactRevision != 0 {
			w.s.compaction.observed(wres.CompactRevision)
			e := storage.NewGoneError(w.startRev, wres.CompactRevision)
			e.Key, e.Err = w.key, err
			w.sendError(e)
		} else {
			w.sendError(w.s.interpret(w.ctx, err, w.key, w.startRev, "watch"))
		}
		return false
	}
	if wres.Created {
		w.createdRev = wres.Header.GetRevision()
		return true
	}
	if wres.IsProgressNotify() {
		if w.progress && w.pred.AllowWatchBookmarks && w.progressTrustworthy(wres.Header.GetRevision()) {
			return w.sendBookmark(wres.Header.GetRevision(), "")
		}
		return true
	}
	return w.sendEvents(wres.Events)
}

// sendEvents translates a response's events, then sends them. When one
// cannot be translated, the events of its revision are withheld (a
// transaction is delivered whole or not at all), the earlier revisions are
// sent and then the error ends the watch.
func (w *watcher) sendEvents(events []*clientv3.Event) bool {
	type translated struct {
		ev  watch.Event
		ok  bool
		rev int64
	}
	out := make([]translated, 0, len(events))
	var failure error
	for _, e := range events {
		if e.Kv.ModRevision <= w.startRev {
			continue // the early revision the etcd watch starts at
		}
		ev, ok, err := w.translate(e)
		if err != nil {
			failure = err
			for len(out) > 0 && out[len(out)-1].rev == e.Kv.ModRevision {
				out = out[:len(out)-1]
			}
			break
		}
		out = append(out, translated{ev, ok, e.Kv.ModRevision})
	}
	for i, t := range out {
		if t.ok && !w.send(t.ev) {
			return false
		}
		w.lastRV = t.rev
		if w.revisionEnds && (i == len(out)-1 || out[i+1].rev != t.rev) &&
			!w.sendBookmark(t.rev, storage.RevisionEndAnnotationKey) {
			return false
		}
	}
	if failure != nil {
		w.sendError(failure)
		return false
	}
	return true
}

// send delivers ev unless the watch is stopped first.
func (w *watcher) send(ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// sendBookmark sends a BOOKMARK at rev, annotated with annotation ("true")
// unless it is "".
func (w *watcher) sendBookmark(rev int64, annotation string) bool {
	obj := w.s.newFunc()
	if err := w.s.versioner.UpdateObject(obj, uint64(rev)); err != nil {
		w.sendError(fmt.Errorf("etcd3: building bookmark: %w", err))
		return false
	}
	if annotation != "" {
		if err := setAnnotation(obj, annotation, "true"); err != nil {
			w.sendError(err)
			return false
		}
	}
	w.lastRV = rev
	return w.send(watch.Event{Type: watch.Bookmark, Object: obj})
}

// sendError sends the final error event (unless stopped first).
func (w *watcher) sendError(err error) {
	w.s.logger.Debug("watch ended with an error", "key", w.key, "error", err)
	st := storage.StatusOf(err)
	w.send(watch.Event{Type: watch.Error, Object: &st})
}
