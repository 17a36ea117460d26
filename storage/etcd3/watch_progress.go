package etcd3

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"
)

// progressTrustworthy reports whether a progress notification at rev may
// become a bookmark, that is whether every event of the watched range at or
// before rev has been delivered.
//
// etcd answers a progress request on a gRPC stream once every watch on that
// stream has caught up, and broadcasts the answer to all of them. But its
// server can deliver an answer computed just before this watch was
// registered right after this watch's creation response; for a watch still
// replaying history (lastRV < createdRev) such a stale answer would promise
// events it has not received yet. A genuine answer is computed after the
// registration, so its revision is at least createdRev:
//   - rev > createdRev: genuine;
//   - rev < createdRev: stale, dropped;
//   - rev == createdRev: either. It is trusted once the watch has delivered
//     the last event of its range up to createdRev (historyEnd), which a
//     one-off probe finds out (see probeHistoryEnd).
func (w *watcher) progressTrustworthy(rev int64) bool {
	switch {
	case rev < w.lastRV:
		return false
	case w.lastRV >= w.createdRev || rev > w.createdRev:
		return true
	case rev < w.createdRev:
		return false
	}
	if w.historyEnd < 0 {
		end, err := w.probeHistoryEnd(w.createdRev)
		if err != nil {
			w.s.logger.Debug("watch history probe failed", "key", w.key, "error", err)
			return false
		}
		w.historyEnd = end
	}
	return w.lastRV >= w.historyEnd
}

// probeStreams numbers the probes' gRPC streams so that each is alone on its own.
var probeStreams atomic.Int64

// probeHistoryEnd returns the revision of the last event in the watched
// range within (lastRV, upTo], or lastRV if there is none. It replays that
// history with a temporary etcd watch on a gRPC stream of its own: there the
// answer to a progress request sent after the watch's creation comes after
// all of its history.
func (w *watcher) probeHistoryEnd(upTo int64) (int64, error) {
	ctx, cancel := context.WithTimeout(w.ctx, probeTimeout)
	defer cancel()
	ctx = metadata.NewOutgoingContext(ctx, metadata.Pairs("listwatch-history-probe",
		strconv.FormatInt(probeStreams.Add(1), 10)))
	opts := []clientv3.OpOption{clientv3.WithRev(w.lastRV + 1), clientv3.WithKeysOnly()}
	if w.recursive {
		opts = append(opts, clientv3.WithPrefix())
	}
	wch := w.s.client.Watch(ctx, w.etcdKey, opts...)
	// etcd drops progress requests while the watch replays history, so ask
	// again until it answers.
	tick := time.NewTicker(probeRetry)
	defer tick.Stop()
	end := w.lastRV
	for {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
			if err := w.s.client.RequestProgress(ctx); err != nil {
				return 0, err
			}
		case wres, ok := <-wch:
			if !ok {
				return 0, errors.New("history probe watch closed")
			}
			if err := wres.Err(); err != nil {
				return 0, err
			}
			for _, e := range wres.Events {
				if e.Kv.ModRevision > upTo {
					return end, nil
				}
				end = e.Kv.ModRevision
			}
			if wres.IsProgressNotify() && wres.Header.GetRevision() >= upTo {
				return end, nil
			}
		}
	}
}

// Timing of history probes: a probe gives up after probeTimeout (the
// notification is then not trusted), and re-requests progress every
// probeRetry.
const (
	probeTimeout = 3 * time.Second
	probeRetry   = 20 * time.Millisecond
)
