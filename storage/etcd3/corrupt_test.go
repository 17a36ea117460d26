package etcd3

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// TestUndecodableValues puts bytes the codec cannot decode under a key:
// every read path reports a corrupt object naming the key.
func TestUndecodableValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value string
		mod   []func(*Config)
	}{
		{"not json", "\x00garbage", nil},
		{"another kind", `{"kind":"WidgetList","apiVersion":"demo.listwatch.dev/v1","items":[]}`, nil},
		{"unknown kind", `{"kind":"Gizmo","apiVersion":"demo.listwatch.dev/v1"}`, nil},
		{"unstructured not json", "{{{", []func(*Config){unstructuredConfig}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t, tc.mod...)
			ctx := testCtx(t)
			ek, _ := s.prepareKey("/widgets/ns/bad")
			if _, err := etcdServer.Client.Put(ctx, ek, tc.value); err != nil {
				t.Fatal(err)
			}
			isCorrupt := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, storage.ErrCorruptObj) || !strings.Contains(err.Error(), "/widgets/ns/bad") {
					t.Fatalf("%s: %v, want a corrupt-object error naming the key", what, err)
				}
			}
			isCorrupt("get", s.Get(ctx, "/widgets/ns/bad", storage.GetOptions{}, s.newFunc()))
			isCorrupt("list", s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, s.newListFunc()))
			noop := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
			isCorrupt("update", s.GuaranteedUpdate(ctx, "/widgets/ns/bad", s.newFunc(), false, nil, noop, nil))
			w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: "0", Predicate: storage.Everything})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			ev := nextEvent(t, w)
			if ev.Type != watch.Error || !strings.Contains(statusMessage(ev), "/widgets/ns/bad") {
				t.Fatalf("watch: %s %v", ev.Type, ev.Object)
			}
			expectClosed(t, w)
			if err := s.Delete(ctx, "/widgets/ns/bad", s.newFunc(), nil, nil, nil, storage.DeleteOptions{IgnoreStoreReadError: true}); err != nil {
				t.Fatal(err)
			}
			if len(rawGet(t, s, "/widgets/ns/bad").Kvs) != 0 {
				t.Fatal("corrupt value not deleted")
			}
		})
	}
}
