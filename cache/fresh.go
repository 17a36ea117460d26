package cache

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/reflector"
)

// ErrNotFresh is matched (errors.Is) by WaitFresh's error when an informer
// had not caught up with its resource's current revision when ctx ended.
var ErrNotFresh = errors.New("cache: informers not fresh")

// How WaitFresh paces itself: how often it looks at the informers' store
// RVs, asks a storage for progress, and retries a failed read of a
// resource's current revision; and after how long it makes an informer
// still behind relist.
const (
	freshPoll        = 10 * time.Millisecond
	freshProgress    = 100 * time.Millisecond
	freshRetry       = 250 * time.Millisecond
	freshRelistAfter = 2 * time.Second
)

// Lag is an informer that had not caught up when WaitFresh gave up.
type Lag struct {
	// Resource names the informer's resource ("pods.v1.").
	Resource string
	// Have is the RV its store had applied everything up to ("": not
	// synced); Want the resource's current RV it waited for ("": it could
	// not be read, see Err).
	Have, Want string
	// Err is why Want could not be read.
	Err error
}

// NotFreshError is WaitFresh's error: the informers that had not caught
// up, and why it stopped waiting (ctx's error).
type NotFreshError struct {
	Lagging []Lag
	Cause   error
}

// Error names each lagging informer with what it had and what it needed.
func (e *NotFreshError) Error() string {
	parts := make([]string, 0, len(e.Lagging))
	for _, l := range e.Lagging {
		switch {
		case l.Err != nil:
			parts = append(parts, fmt.Sprintf("%s: current resourceVersion unknown: %v", l.Resource, l.Err))
		case l.Have == "":
			parts = append(parts, fmt.Sprintf("%s: not synced, want resourceVersion %s", l.Resource, l.Want))
		default:
			parts = append(parts, fmt.Sprintf("%s: at resourceVersion %s, want %s", l.Resource, l.Have, l.Want))
		}
	}
	return fmt.Sprintf("cache: informers not fresh (%s): %v", strings.Join(parts, "; "), e.Cause)
}

// Is makes errors.Is(err, ErrNotFresh) true.
func (e *NotFreshError) Is(target error) bool { return target == ErrNotFresh }

// Unwrap returns the cause (ctx's error).
func (e *NotFreshError) Unwrap() error { return e.Cause }

// freshWait is one informer WaitFresh waits for.
type freshWait struct {
	resource string
	inf      *Informer
	lw       reflector.ListerWatcher
	want     uint64 // 0: not read yet
	wantErr  error  // the last failed read of want
}

// WaitFresh waits until every informer the cache has made so far holds
// every write made before the call: for each, it reads the resource's
// current resourceVersion with a consistent list of one item (RV unset:
// a quorum read of etcd's revision, or the API server's consistent read),
// then waits until the informer's store has applied everything up to it
// (SharedIndexInformer.StoreResourceVersion), which also means it has
// synced. A resource without writes since the informer's last event
// reaches it only through a bookmark: WaitFresh asks a storage for
// progress notifications every 100 ms while it waits
// (reflector.ProgressRequester; a cacher passes them on to its watchers at
// once). An informer still behind after 2 s (over HTTP, where bookmarks
// come at the server's pace: about once a minute from Kubernetes or a
// cacher's default) is made to relist with a consistent read
// (SharedIndexInformer.Relist), once per call: the cost of a list, as a
// controller manager that starts its informers on election pays for every
// resource. It returns nil, or when ctx ends a *NotFreshError
// (ErrNotFresh) naming each informer still behind; give ctx a deadline.
func (c *Cache) WaitFresh(ctx context.Context) error {
	waits := c.freshWaits()
	for _, w := range waits {
		for w.want == 0 {
			if w.want, w.wantErr = currentRV(ctx, w.lw); w.wantErr == nil {
				break
			}
			if !sleep(ctx, freshRetry) {
				return notFresh(ctx, waits)
			}
		}
	}
	poll := time.NewTicker(freshPoll)
	defer poll.Stop()
	var lastProgress time.Time
	relistAt := time.Now().Add(freshRelistAfter)
	for {
		pending := waits[:0]
		for _, w := range waits {
			if !w.fresh() {
				pending = append(pending, w)
			}
		}
		if waits = pending; len(waits) == 0 {
			return nil
		}
		if !relistAt.IsZero() && time.Now().After(relistAt) {
			relistAt = time.Time{}
			for _, w := range waits {
				c.opts.Logger.Info("cache: informer not fresh after a while: relisting it", "resource", w.resource,
					"have", w.inf.StoreResourceVersion(), "want", strconv.FormatUint(w.want, 10), "after", freshRelistAfter.String())
				w.inf.Relist()
			}
		}
		if time.Since(lastProgress) >= freshProgress {
			lastProgress = time.Now()
			for _, w := range waits {
				if p, ok := w.lw.(reflector.ProgressRequester); ok {
					if err := p.RequestWatchProgress(ctx); err != nil && ctx.Err() == nil {
						c.opts.Logger.Debug("cache: progress request failed", "resource", w.resource, "err", err)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return notFresh(ctx, waits)
		case <-poll.C:
		}
	}
}

// freshWaits returns the cache's informers to wait for.
func (c *Cache) freshWaits() []*freshWait {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*freshWait, 0, len(c.informers))
	for gvk, inf := range c.informers {
		src := c.sources[gvk]
		out = append(out, &freshWait{resource: src.resource, inf: inf, lw: src.lw})
	}
	return out
}

// fresh reports whether w's informer has applied everything up to w.want.
func (w *freshWait) fresh() bool {
	have, err := strconv.ParseUint(w.inf.StoreResourceVersion(), 10, 64)
	return err == nil && have >= w.want
}

// notFresh is the error of a WaitFresh whose ctx ended with waits pending.
func notFresh(ctx context.Context, waits []*freshWait) error {
	e := &NotFreshError{Cause: ctx.Err()}
	for _, w := range waits {
		l := Lag{Resource: w.resource, Have: w.inf.StoreResourceVersion(), Err: w.wantErr}
		if w.want != 0 {
			l.Want, l.Err = strconv.FormatUint(w.want, 10), nil
		} else if l.Err == nil {
			l.Err = ctx.Err()
		}
		e.Lagging = append(e.Lagging, l)
	}
	return e
}

// currentRV reads the current resourceVersion of lw's resource with a
// consistent list of one item.
func currentRV(ctx context.Context, lw reflector.ListerWatcher) (uint64, error) {
	list, err := lw.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return 0, err
	}
	rv, err := strconv.ParseUint(acc.GetResourceVersion(), 10, 64)
	if err != nil || rv == 0 {
		return 0, fmt.Errorf("list resourceVersion %q is not a revision", acc.GetResourceVersion())
	}
	return rv, nil
}

// sleep waits d or until ctx ends, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// resourceName is how the cache names a resource in its reports:
// "widgets.v1.demo.listwatch.dev".
func resourceName(resource, version, group string) string {
	return resource + "." + version + "." + group
}
