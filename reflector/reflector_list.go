package reflector

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// listResult is one complete (possibly paginated) list.
type listResult[T any] struct {
	items     []T
	rv        string
	paginated bool
}

// list fetches the whole collection and Replaces the store with it.
// An "expired" or "too large RV" answer makes it retry at once with a
// consistent read (RV "").
func (r *Reflector[T]) list(ctx context.Context) error {
	rv := r.relistResourceVersion()
	res, err := r.pagedList(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil && (isExpired(err) || isTooLargeResourceVersion(err)) && rv != "" {
		r.log.Info("list at last RV unavailable, relisting consistently", "rv", rv, "err", err)
		r.setRVUnavailable(true)
		res, err = r.pagedList(ctx, metav1.ListOptions{ResourceVersion: ""})
	}
	if err != nil {
		return fmt.Errorf("listing: %w", err)
	}
	r.mu.Lock()
	if rv == "0" && res.paginated {
		r.paginatedResult = true
	}
	r.rvUnavailable = false
	r.mu.Unlock()
	if err := r.cfg.Store.Replace(res.items, res.rv); err != nil {
		return fmt.Errorf("replacing store content: %w", err)
	}
	r.setLastSyncRV(res.rv)
	return nil
}

// pageSize returns the limit for a list at rv, 0 for none. Lists at an
// exact past RV are not paginated: a server's watch cache serves only
// unpaginated lists at such RVs, unless it showed it pages anyway.
func (r *Reflector[T]) pageSize(rv string) int64 {
	if r.cfg.PageSize < 0 {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.paginatedResult || rv == "" || rv == "0" {
		return r.cfg.PageSize
	}
	return 0
}

// pagedList fetches every page. All pages are served at the first page's
// RV; when a continue token expires (410) it falls back to one full list
// with the original options.
func (r *Reflector[T]) pagedList(ctx context.Context, opts metav1.ListOptions) (listResult[T], error) {
	original := opts
	opts.Limit = r.pageSize(opts.ResourceVersion)
	var res listResult[T]
	for {
		obj, err := r.cfg.ListerWatcher.List(ctx, opts)
		if err != nil {
			if opts.Continue != "" && isExpired(err) {
				r.log.Info("continue token expired, listing in full", "err", err)
				return r.fullList(ctx, original)
			}
			return listResult[T]{}, err
		}
		next, err := r.appendPage(&res, obj)
		if err != nil {
			return listResult[T]{}, err
		}
		if next == "" {
			return res, nil
		}
		res.paginated = true
		opts.Continue = next
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}

func (r *Reflector[T]) fullList(ctx context.Context, opts metav1.ListOptions) (listResult[T], error) {
	opts.Limit, opts.Continue = 0, ""
	obj, err := r.cfg.ListerWatcher.List(ctx, opts)
	if err != nil {
		return listResult[T]{}, err
	}
	res := listResult[T]{paginated: true}
	if _, err := r.appendPage(&res, obj); err != nil {
		return listResult[T]{}, err
	}
	return res, nil
}

// appendPage adds a page's items to res (copied out of the list, so that
// the list's backing array is not pinned) and returns its continue token.
func (r *Reflector[T]) appendPage(res *listResult[T], obj runtime.Object) (string, error) {
	lm, err := meta.ListAccessor(obj)
	if err != nil {
		return "", fmt.Errorf("list %T has no list metadata: %w", obj, err)
	}
	if res.rv == "" {
		res.rv = lm.GetResourceVersion()
	}
	items, err := meta.ExtractListWithAlloc(obj)
	if err != nil {
		return "", fmt.Errorf("extracting items of %T: %w", obj, err)
	}
	for _, it := range items {
		t, ok := it.(T)
		if !ok {
			return "", fmt.Errorf("list item of type %T, want %T", it, *new(T))
		}
		res.items = append(res.items, t)
	}
	return lm.GetContinue(), nil
}
