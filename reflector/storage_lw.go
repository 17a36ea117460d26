package reflector

import (
	"context"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// metav1.ListOptions are translated to storage options by
// storage.ListOptionsFrom, with Kubernetes' validation (a malformed
// selector is 400 Bad Request, options that do not go together 422
// Invalid): resourceVersion, resourceVersionMatch, limit, continue, label,
// field and shard selectors, allowWatchBookmarks
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

// List implements ListerWatcher.
func (l *storageLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	opts.Watch = false
	sopts, err := storage.ListOptionsFrom(opts, l.getAttrs, nil)
	if err != nil {
		return nil, err
	}
	list := l.newListFunc()
	if err := l.s.GetList(ctx, l.key, sopts, list); err != nil {
		return nil, err
	}
	return list, nil
}

// RequestWatchProgress implements ProgressRequester: it asks the storage
// (storage.Interface.RequestWatchProgress) for a progress notification,
// which its watches that allow bookmarks receive as a bookmark.
func (l *storageLW) RequestWatchProgress(ctx context.Context) error {
	return l.s.RequestWatchProgress(ctx)
}

// Watch implements ListerWatcher. Bookmarks asked for also ask for etcd's
// progress notifications.
func (l *storageLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.Watch = true
	sopts, err := storage.ListOptionsFrom(opts, l.getAttrs, nil)
	if err != nil {
		return nil, err
	}
	sopts.ProgressNotify = opts.AllowWatchBookmarks
	w, err := l.s.Watch(ctx, l.key, sopts)
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
