package storagetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// seqAnnotation carries a number unique to every write, so that an event
// delivered by the store can be matched to the write it reports.
const seqAnnotation = "storagetest.listwatch.dev/seq"

// truthObject is one decoded version of an object in etcd's history.
type truthObject struct {
	key    string // namespace/name
	seq    string
	labels labels.Set
	fields fields.Set
}

// truthEvent is one key change at one revision, as etcd reports it.
type truthEvent struct {
	rev     uint64
	deleted bool
	created bool
	cur     *truthObject // nil for a delete
	prev    *truthObject // nil for a create
}

// truthRevision is every change under the prefix at one revision.
type truthRevision struct {
	rev    uint64
	events []truthEvent
}

// history is etcd's own history of the resource prefix, recorded by a raw
// etcd watch with prevKV started before the first write.
type history struct {
	mu      sync.Mutex
	revs    []truthRevision // ascending
	last    uint64          // highest revision received
	err     error           // the recorder's failure, if any
	changed chan struct{}   // closed and replaced when revs or err change
}

// recordHistory watches etcdPrefix from fromRev and records every change
// until ctx is done. decode turns a stored value into a truthObject. With
// resume, a watch that fails (no leader, etcd down) is opened again from
// the revision after the last one recorded, until ctx is done; only a
// compaction of a revision not yet recorded fails the history.
func recordHistory(ctx context.Context, cli *clientv3.Client, etcdPrefix string, fromRev int64,
	decode func([]byte) (*truthObject, error), resume bool) (*history, <-chan struct{}) {
	h := &history{changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := fromRev
		for {
			err := h.follow(ctx, cli, etcdPrefix, next, decode)
			if ctx.Err() != nil {
				return
			}
			if !resume || errors.Is(err, rpctypes.ErrCompacted) || errors.Is(err, errDecode) {
				h.fail(err)
				return
			}
			h.mu.Lock()
			next = max(next, int64(h.last)+1)
			h.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return h, done
}

// errDecode marks a ground-truth value that could not be decoded.
var errDecode = errors.New("ground truth")

// follow records one etcd watch from rev until it fails or closes.
func (h *history) follow(ctx context.Context, cli *clientv3.Client, etcdPrefix string, rev int64,
	decode func([]byte) (*truthObject, error)) error {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := cli.Watch(wctx, etcdPrefix, clientv3.WithPrefix(), clientv3.WithPrevKV(), clientv3.WithRev(rev),
		clientv3.WithProgressNotify())
	for resp := range wch {
		if err := resp.Err(); err != nil {
			return fmt.Errorf("ground-truth watch failed: %w", err)
		}
		if resp.IsProgressNotify() {
			h.advance(uint64(resp.Header.Revision))
			continue
		}
		if len(resp.Events) == 0 {
			continue
		}
		if err := h.add(resp.Events, decode); err != nil {
			return fmt.Errorf("%w: %w", errDecode, err)
		}
	}
	return fmt.Errorf("ground-truth watch closed early")
}

func (h *history) add(evs []*clientv3.Event, decode func([]byte) (*truthObject, error)) error {
	var batch []truthEvent
	for _, ev := range evs {
		te := truthEvent{rev: uint64(ev.Kv.ModRevision)}
		var err error
		if ev.Type == clientv3.EventTypeDelete {
			te.deleted = true
			if ev.PrevKv == nil {
				return fmt.Errorf("ground truth: delete of %q without prevKV", ev.Kv.Key)
			}
		} else {
			te.created = ev.IsCreate()
			if te.cur, err = decode(ev.Kv.Value); err != nil {
				return fmt.Errorf("ground truth: %q at %d: %w", ev.Kv.Key, te.rev, err)
			}
		}
		if ev.PrevKv != nil {
			if te.prev, err = decode(ev.PrevKv.Value); err != nil {
				return fmt.Errorf("ground truth: previous %q at %d: %w", ev.Kv.Key, te.rev, err)
			}
		} else if !te.created {
			return fmt.Errorf("ground truth: update of %q at %d without prevKV", ev.Kv.Key, te.rev)
		}
		batch = append(batch, te)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, te := range batch {
		n := len(h.revs)
		if n > 0 && h.revs[n-1].rev == te.rev {
			h.revs[n-1].events = append(h.revs[n-1].events, te)
			continue
		}
		if n > 0 && h.revs[n-1].rev > te.rev {
			return fmt.Errorf("ground truth: etcd revision %d after %d", te.rev, h.revs[n-1].rev)
		}
		h.revs = append(h.revs, truthRevision{rev: te.rev, events: []truthEvent{te}})
	}
	h.last = max(h.last, batch[len(batch)-1].rev)
	h.notifyLocked()
	return nil
}

// advance records that every change up to rev has been received (a
// progress notification).
func (h *history) advance(rev uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if rev > h.last {
		h.last = rev
		h.notifyLocked()
	}
}

func (h *history) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
	h.notifyLocked()
}

func (h *history) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// waitFor blocks until the history holds revision rev, the recorder failed,
// or ctx is done.
func (h *history) waitFor(ctx context.Context, rev uint64) error {
	for {
		h.mu.Lock()
		last, err, ch := h.last, h.err, h.changed
		h.mu.Unlock()
		if err != nil {
			return err
		}
		if last >= rev {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("ground truth stuck at revision %d, waiting for %d: %w", last, rev, ctx.Err())
		}
	}
}

// snapshot returns the revisions recorded so far.
func (h *history) snapshot() []truthRevision {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.revs
}

// truthDecoder returns the decoder of stored values into truthObjects.
func truthDecoder(env GuaranteeEnv) func([]byte) (*truthObject, error) {
	attrs := env.attrs()
	return func(data []byte) (*truthObject, error) {
		obj, _, err := env.Codec.Decode(data, nil, env.NewFunc())
		if err != nil {
			return nil, err
		}
		return newTruthObject(obj, attrs)
	}
}

func newTruthObject(obj runtime.Object, attrs storage.AttrFunc) (*truthObject, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	l, f, err := attrs(obj)
	if err != nil {
		return nil, err
	}
	return &truthObject{key: acc.GetNamespace() + "/" + acc.GetName(),
		seq: acc.GetAnnotations()[seqAnnotation], labels: l, fields: f}, nil
}

// expectedEvent is an event a watcher must receive.
type expectedEvent struct {
	Type watch.EventType
	RV   uint64
	Key  string
	Seq  string
}

// matcher reports whether an object's attributes satisfy a watcher's predicate.
type matcher func(l labels.Set, f fields.Set) bool

// expectedStream returns the events a watcher with predicate match started at
// RV start must receive up to RV end (inclusive), in order: the changes of
// every revision in (start, end], with the transitions of a filtered watch
// (an update into the selection is ADDED, out of it DELETED carrying the
// previous object). revs is ascending: the span is found by binary search,
// and only its revisions are read.
func expectedStream(revs []truthRevision, start, end uint64, match matcher) []expectedEvent {
	i := sort.Search(len(revs), func(i int) bool { return revs[i].rev > start })
	j := sort.Search(len(revs), func(j int) bool { return revs[j].rev > end })
	var out []expectedEvent
	for _, r := range revs[i:max(i, j)] {
		for _, te := range r.events {
			if ev, ok := expectedFor(te, match); ok {
				out = append(out, ev)
			}
		}
	}
	return out
}

func expectedFor(te truthEvent, match matcher) (expectedEvent, bool) {
	in := func(o *truthObject) bool { return o != nil && match(o.labels, o.fields) }
	curIn, prevIn := in(te.cur), in(te.prev)
	switch {
	case te.deleted && prevIn:
		return expectedEvent{Type: watch.Deleted, RV: te.rev, Key: te.prev.key, Seq: te.prev.seq}, true
	case te.deleted:
		return expectedEvent{}, false
	case curIn && prevIn && !te.created:
		return expectedEvent{Type: watch.Modified, RV: te.rev, Key: te.cur.key, Seq: te.cur.seq}, true
	case curIn:
		return expectedEvent{Type: watch.Added, RV: te.rev, Key: te.cur.key, Seq: te.cur.seq}, true
	case prevIn && !te.created:
		return expectedEvent{Type: watch.Deleted, RV: te.rev, Key: te.prev.key, Seq: te.prev.seq}, true
	}
	return expectedEvent{}, false
}
