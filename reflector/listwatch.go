package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ListerWatcher lists and watches one resource. Implementations: the
// in-process adapter over a storage.Interface (NewStorageListerWatcher) and
// the HTTP client in reflector/httplw.
//
// List returns a list object (with ListMeta: resourceVersion, continue) whose
// items meta.ExtractList can read. Watch returns a stream whose errors arrive
// as watch.Error events carrying a *metav1.Status (410 Expired for a
// compacted resource version), which the reflector turns back into a
// *storage.Error with storage.FromStatus. Errors returned directly should be
// a *storage.Error or carry a metav1.Status (an apimachinery StatusError);
// the reflector tests them with errors.Is against storage.ErrGone,
// ErrTooLargeResourceVersion, ErrTooManyRequests, ErrUnavailable, ...
type ListerWatcher interface {
	List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// ProgressRequester is implemented by a ListerWatcher that can ask its
// storage for a progress notification now, so that its watches that allow
// bookmarks get one at the storage's current revision even when the
// resource sees no writes (the storage adapter, NewStorageListerWatcher).
// Over HTTP there is no such request: bookmarks come at the server's pace.
type ProgressRequester interface {
	RequestWatchProgress(ctx context.Context) error
}

// ListWatchFuncs adapts plain functions to a ListerWatcher.
type ListWatchFuncs struct {
	ListFunc  func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
}

// List implements ListerWatcher.
func (f ListWatchFuncs) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	return f.ListFunc(ctx, opts)
}

// Watch implements ListerWatcher.
func (f ListWatchFuncs) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return f.WatchFunc(ctx, opts)
}
