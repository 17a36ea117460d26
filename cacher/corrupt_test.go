package cacher_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// A value the storage cannot decode, present when the cacher starts, does
// not keep the cache from becoming ready: it is filled (in pages of 2 keys
// here) around the corrupt key; reads that would have to show that object
// name it, as the storage does; other reads are served from the cache.
// After the unsafe delete, lists answer normally and a new watch sees new
// writes within 2 s, and the watch that covered the key is told with the
// storage's StoreReadError, never a DELETED of an object it never saw.
func TestCorruptObjectDoesNotTakeResourceDown(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	for _, n := range names(4) {
		create(t, store, "ns", n, nil)
	}
	create(t, store, "other", "x", nil)
	badKey := key("ns", "bad")
	if _, err := etcd.Client.Put(testCtx(t), etcdPrefix(t)+badKey, "\x00 undecodable"); err != nil {
		t.Fatal(err)
	}
	from := create(t, store, "ns", "z", nil)

	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: newWidget,
		NewListFunc: newWidgetList, GetAttrs: widget.GetAttrs, ListPageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	ready, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if err := c.WaitReady(ready); err != nil {
		t.Fatalf("the cache never became ready with a corrupt object in etcd: %v", err)
	}

	for _, rv := range []storage.RV{storage.RVAny, {}} {
		got, err := listNames(t, c, "/widgets/other", rv)
		if err != nil || !slices.Equal(got, []string{"other/x"}) {
			t.Fatalf("list of another namespace at RV %q: %v %v", rv, got, err)
		}
		if _, err := listNames(t, c, "/widgets", rv); !apierrors.IsStoreReadError(err) || !namesKey(err, badKey) {
			t.Fatalf("list over the corrupt key at RV %q: %v, want a StoreReadError naming %s", rv, err, badKey)
		}
	}
	if err := c.Get(testCtx(t), badKey, storage.GetOptions{ResourceVersion: storage.RVAny}, widget.New()); !storage.IsCode(err, storage.CodeCorruptObj) {
		t.Fatalf("Get of the corrupt key: %v, want a corrupt-object error", err)
	}
	initial, err := c.Watch(testCtx(t), "/widgets/ns", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true,
		Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer initial.Stop()
	for {
		ev := next(t, initial, 10*time.Second)
		if ev.Type == watch.Error {
			break
		}
		if rvOf(t, ev.Object) == 0 || ev.Type != watch.Added {
			t.Fatalf("initial events over the corrupt key: %s, want ADDED then an error", ev.Type)
		}
	}
	live := watchAll(t, c, rvAt(from))
	otherLive, err := c.Watch(testCtx(t), "/widgets/other", storage.ListOptions{ResourceVersion: storage.RVAt(from),
		Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer otherLive.Stop()

	if err := c.Delete(testCtx(t), badKey, widget.New(), nil, nil, nil,
		storage.DeleteOptions{IgnoreStoreReadError: true}); err != nil {
		t.Fatalf("unsafe delete: %v", err)
	}
	deleted := time.Now()
	eventually(t, 2*time.Second, "lists answer normally", func() error {
		got, err := listNames(t, c, "/widgets", storage.RV{})
		if err != nil {
			return err
		}
		if slices.Contains(got, "ns/bad") || len(got) != 6 {
			return fmt.Errorf("list holds %v", got)
		}
		return nil
	})
	fresh := watchAll(t, c, storage.RV{})
	xRV := bump(t, c, "other", "x")
	for {
		ev := next(t, fresh, 2*time.Second-time.Since(deleted))
		if ev.Type == watch.Error {
			t.Fatalf("new watch: %v", ev.Object)
		}
		if rvOf(t, ev.Object) == xRV {
			break
		}
	}
	ev := next(t, live, 10*time.Second)
	if ev.Type != watch.Error {
		t.Fatalf("the watch covering the corrupt key got %s %v, want the storage's error", ev.Type, ev.Object)
	}
	if st, ok := ev.Object.(*metav1.Status); !ok || st.Reason != metav1.StatusReasonStoreReadError {
		t.Fatalf("the watch covering the corrupt key ended with %v, want a StoreReadError", ev.Object)
	}
	if ev := next(t, otherLive, 10*time.Second); ev.Type != watch.Modified || rvOf(t, ev.Object) != xRV {
		t.Fatalf("the watch of another namespace got %s, want x's update", ev.Type)
	}
}

// namesKey reports whether err's Status names key among its causes.
func namesKey(err error, key string) bool {
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		return false
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == key {
			return true
		}
	}
	return false
}
