package cacher_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestReadBeyondAnyRevisionAnsweredAtOnce: a Get, list or watch at an RV
// above any revision etcd can have is answered by the cacher itself, as an
// HTTP client is answered: too large resource version (504 with the
// ResourceVersionTooLarge cause) naming etcd's current revision, at once,
// although the cacher waits an hour for an RV etcd may still reach.
func TestReadBeyondAnyRevisionAnsweredAtOnce(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.FreshWaitTimeout = time.Hour
	})
	cur := create(t, c, "ns", "a", nil)
	// Had the cacher waited for the RV, the context would end first and
	// the error wrap its deadline.
	ctx, cancel := context.WithTimeout(testCtx(t), 20*time.Second)
	defer cancel()
	for _, rv := range []storage.RV{storage.RVAt(1 << 63), storage.RVAt(math.MaxUint64)} {
		for name, read := range map[string]func() error{
			"get": func() error {
				return c.Get(ctx, key("ns", "a"), storage.GetOptions{ResourceVersion: rv}, &widget.Widget{})
			},
			"list": func() error {
				return c.GetList(ctx, "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
					Predicate: storage.Everything}, &widget.WidgetList{})
			},
			"exact list": func() error {
				return c.GetList(ctx, "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
					ResourceVersionMatch: "Exact", Predicate: storage.Everything}, &widget.WidgetList{})
			},
			"watch": func() error {
				w, err := c.Watch(ctx, "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
					Predicate: storage.Everything})
				if err == nil {
					w.Stop()
				}
				return err
			},
		} {
			err := read()
			var se *storage.Error
			if !errors.As(err, &se) || se.Code != storage.CodeTooLargeResourceVersion {
				t.Fatalf("%s at RV %s: %v, want too large resource version", name, rv.String(), err)
			}
			if errors.Is(err, context.DeadlineExceeded) || se.Oldest < int64(cur) {
				t.Fatalf("%s at RV %s: %v (current %d), want an answer at once naming a current revision >= %d",
					name, rv.String(), err, se.Oldest, cur)
			}
			if st := se.Status(); st.Code != 504 || st.Details == nil || len(st.Details.Causes) != 1 ||
				st.Details.Causes[0].Type != "ResourceVersionTooLarge" {
				t.Fatalf("%s at RV %s: status %+v, want 504 with the ResourceVersionTooLarge cause", name, rv.String(), st)
			}
		}
	}
}
