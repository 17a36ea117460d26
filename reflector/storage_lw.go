package reflector

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// StorageLWOption configures NewStorageListerWatcher.
type StorageLWOption func(*storageLW)

// WithAttrFunc sets the function that extracts labels and fields for
// selectors (default storage.DefaultAttrs: metadata.name and
// metadata.namespace).
func WithAttrFunc(f storage.AttrFunc) StorageLWOption {
	return func(l *storageLW) { l.getAttrs = f }
}

// storageLW is a ListerWatcher over an in-process storage.Interface.
type storageLW struct {
	s           storage.Interface
	key         string
	newListFunc func() runtime.Object
	getAttrs    storage.AttrFunc
}

// NewStorageListerWatcher returns a ListerWatcher that lists and watches
// every object below resourcePrefix (such as "/widgets"), or below
// resourcePrefix/namespace when namespace is not "", in s (the etcd3 store
// or the cacher). newListFunc returns an empty list object for List.
// metav1.ListOptions are translated to storage options: resourceVersion,
// resourceVersionMatch, limit, continue, label, field and shard selectors (a
// malformed selector is a 400 Bad Request error), allowWatchBookmarks
// (which also asks for etcd progress notifications), sendInitialEvents and
// timeoutSeconds (the watch then ends normally after that long).
func NewStorageListerWatcher(s storage.Interface, resourcePrefix string, newListFunc func() runtime.Object, namespace string, opts ...StorageLWOption) ListerWatcher {
	key := "/" + strings.Trim(resourcePrefix, "/")
	if namespace != "" {
		key += "/" + namespace
	}
	l := &storageLW{s: s, key: key, newListFunc: newListFunc}
	for _, o := range opts {
		o(l)
	}
	return l
}

// predicate parses the selectors of opts.
func (l *storageLW) predicate(opts metav1.ListOptions) (storage.SelectionPredicate, error) {
	lsel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return storage.SelectionPredicate{}, storage.NewInvalidArgumentError(fmt.Sprintf("invalid label selector %q", opts.LabelSelector), err)
	}
	fsel, err := fields.ParseSelector(opts.FieldSelector)
	if err != nil {
		return storage.SelectionPredicate{}, storage.NewInvalidArgumentError(fmt.Sprintf("invalid field selector %q", opts.FieldSelector), err)
	}
	pred := storage.SelectionPredicate{
		Label: lsel, Field: fsel, GetAttrs: l.getAttrs,
		Limit: opts.Limit, Continue: opts.Continue, AllowWatchBookmarks: opts.AllowWatchBookmarks,
	}
	if opts.ShardSelector != "" {
		if pred.Shard, err = storage.ParseShardSelector(opts.ShardSelector); err != nil {
			return storage.SelectionPredicate{}, err
		}
	}
	return pred, nil
}

// List implements ListerWatcher.
func (l *storageLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	pred, err := l.predicate(opts)
	if err != nil {
		return nil, err
	}
	list := l.newListFunc()
	err = l.s.GetList(ctx, l.key, storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
	}, list)
	if err != nil {
		return nil, err
	}
	return list, nil
}

// Watch implements ListerWatcher.
func (l *storageLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	pred, err := l.predicate(opts)
	if err != nil {
		return nil, err
	}
	pred.Limit, pred.Continue = 0, ""
	w, err := l.s.Watch(ctx, l.key, storage.ListOptions{
		ResourceVersion:      opts.ResourceVersion,
		ResourceVersionMatch: opts.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            true,
		ProgressNotify:       opts.AllowWatchBookmarks,
		SendInitialEvents:    opts.SendInitialEvents,
	})
	if err != nil {
		return nil, err
	}
	if opts.TimeoutSeconds != nil && *opts.TimeoutSeconds > 0 {
		return newTimeoutWatch(w, time.Duration(*opts.TimeoutSeconds)*time.Second), nil
	}
	return w, nil
}

// timeoutWatch forwards a watch's events and ends it normally (closing
// its channel without an error event) after a timeout, as an API server
// does for timeoutSeconds.
type timeoutWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newTimeoutWatch(inner watch.Interface, d time.Duration) *timeoutWatch {
	w := &timeoutWatch{inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run(d)
	return w
}

// run owns out: it closes it exactly once, after stopping the inner watch.
func (w *timeoutWatch) run(d time.Duration) {
	defer close(w.done)
	defer close(w.out)
	defer w.inner.Stop()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.inner.ResultChan():
			if !ok {
				return
			}
			select {
			case w.out <- ev:
			case <-w.stop:
				return
			case <-timer.C:
				return
			}
		case <-timer.C:
			return
		case <-w.stop:
			return
		}
	}
}

// ResultChan implements watch.Interface.
func (w *timeoutWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop implements watch.Interface; it waits for the forwarding goroutine.
func (w *timeoutWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}
