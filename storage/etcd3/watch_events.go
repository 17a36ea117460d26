package etcd3

import (
	"fmt"
	"net/http"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// translate turns an etcd event into a watch event, applying the predicate
// to the old and new states: an update that leaves the selection becomes
// DELETED (carrying the previous object at the event's revision), one that
// enters it becomes ADDED. ok is false when the event is filtered out.
func (w *watcher) translate(e *clientv3.Event) (ev watch.Event, ok bool, err error) {
	rev := e.Kv.ModRevision
	key := string(e.Kv.Key)
	if e.Type == mvccpb.DELETE {
		if e.PrevKv == nil {
			return ev, false, w.missingPrev(key)
		}
		old, err := w.decode(key, e.PrevKv.Value, rev)
		if err != nil {
			w.s.logger.Info("watch: a deleted object's last state cannot be read", "key", w.s.userKey(key), "err", err)
			return ev, false, errCorruptDeletion
		}
		if m, err := w.matches(key, old); err != nil || !m {
			return ev, false, err
		}
		return watch.Event{Type: watch.Deleted, Object: old}, true, nil
	}
	cur, err := w.decode(key, e.Kv.Value, rev)
	if err != nil {
		return ev, false, err
	}
	curOK, err := w.matches(key, cur)
	if err != nil {
		return ev, false, err
	}
	if e.IsCreate() {
		return watch.Event{Type: watch.Added, Object: cur}, curOK, nil
	}
	if w.pred.Empty() {
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	}
	if e.PrevKv == nil {
		return ev, false, w.missingPrev(key)
	}
	old, err := w.decode(key, e.PrevKv.Value, rev)
	if err != nil {
		return ev, false, err
	}
	oldOK, err := w.matches(key, old)
	if err != nil {
		return ev, false, err
	}
	switch {
	case curOK && oldOK:
		return watch.Event{Type: watch.Modified, Object: cur}, true, nil
	case curOK:
		return watch.Event{Type: watch.Added, Object: cur}, true, nil
	case oldOK:
		return watch.Event{Type: watch.Deleted, Object: old}, true, nil
	}
	return ev, false, nil
}

// missingPrev reports an update or delete event without its previous value.
// etcd omits it only when the previous revision was compacted while the
// watch was still catching up with history, so the watch cannot go on
// reliably: it ends with 410 Gone and the client relists.
func (w *watcher) missingPrev(key string) error {
	e := storage.NewGoneError(w.startRev, 0)
	e.Key = w.s.userKey(key)
	e.Msg = fmt.Sprintf("too old resource version: %d: etcd history was compacted while the watch was "+
		"catching up (event without its previous value)", w.startRev)
	return e
}

func (w *watcher) decode(etcdKey string, raw []byte, rev int64) (runtime.Object, error) {
	data, _, err := w.s.fromStorage(w.ctx, etcdKey, raw)
	if err != nil {
		return nil, err
	}
	return w.s.decodeNew(etcdKey, data, rev)
}

func (w *watcher) matches(etcdKey string, obj runtime.Object) (bool, error) {
	ok, err := w.pred.Matches(obj)
	if err != nil {
		return false, fmt.Errorf("etcd3: matching %q: %w", w.s.userKey(etcdKey), err)
	}
	return ok, nil
}

// sendInitial sends the state at startRev (latest when 0, then not older
// than minRV) as ADDED events,
// paging through etcd at one pinned revision, and sets startRev to that
// revision. When asked (annotate) it ends with the annotated bookmark.
func (w *watcher) sendInitial() bool {
	var ops []clientv3.OpOption
	if w.recursive {
		ops = append(ops, clientv3.WithRange(clientv3.GetPrefixRangeEnd(w.etcdKey)), clientv3.WithLimit(w.s.initialBatch))
	}
	rev := w.startRev
	from := w.etcdKey
	for {
		cur := ops
		if rev > 0 {
			cur = append(cur[:len(cur):len(cur)], clientv3.WithRev(rev))
		}
		resp, err := w.s.kv.Get(w.ctx, from, cur...)
		if err != nil {
			if w.ctx.Err() == nil {
				w.sendError(w.s.interpret(w.ctx, err, w.key, rev, "watch: initial list"))
			}
			return false
		}
		if rev == 0 {
			rev = resp.Header.Revision
			if err := checkMinimumRV(uint64(w.minRV), rev); err != nil {
				w.sendError(err)
				return false
			}
		}
		for _, kv := range resp.Kvs {
			obj, err := w.decode(string(kv.Key), kv.Value, kv.ModRevision)
			if err != nil {
				w.sendError(err)
				return false
			}
			m, err := w.matches(string(kv.Key), obj)
			if err != nil {
				w.sendError(err)
				return false
			}
			if m && !w.send(watch.Event{Type: watch.Added, Object: obj}) {
				return false
			}
		}
		if !w.recursive || !resp.More || len(resp.Kvs) == 0 {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	w.startRev = rev
	if w.annotate {
		return w.sendBookmark(rev, storage.InitialEventsAnnotationKey)
	}
	return true
}

func setAnnotation(obj runtime.Object, key, value string) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return fmt.Errorf("etcd3: annotating bookmark: %w", err)
	}
	ann := acc.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[key] = value
	acc.SetAnnotations(ann)
	return nil
}

// errCorruptDeletion is the error of a DELETED event whose previous value
// cannot be read (a corrupt object removed with the unsafe delete): a 500
// with reason StoreReadError, as Kubernetes reports it, so that clients can
// tell it from a server fault. The key and the cause are logged, not told.
var errCorruptDeletion = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status:  metav1.StatusFailure,
	Code:    http.StatusInternalServerError,
	Reason:  metav1.StatusReasonStoreReadError,
	Message: "saw a DELETED event, but object data is corrupt",
}}
