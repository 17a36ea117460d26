package etcd3

import (
	"context"
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
			isCorrupt("update", s.GuaranteedUpdate(ctx, "/widgets/ns/bad", s.newFunc(), false, nil, noop, nil, storage.UpdateOptions{}))
			w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, Predicate: storage.Everything})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			ev := nextEvent(t, w)
			// The key is for the log; a client is not told it.
			if ev.Type != watch.Error || strings.Contains(statusMessage(ev), "/widgets/ns/bad") {
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

// TestUnsafeDelete covers the unsafe path (IgnoreStoreReadError): it
// refuses readable objects, including one repaired by a concurrent write
// before the delete lands, and watchers see the removal of a corrupt object
// as a StoreReadError.
func TestUnsafeDelete(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	unsafe := storage.DeleteOptions{IgnoreStoreReadError: true}
	mustCreate(t, s, "/widgets/ns/ok", testWidget("ok", nil))
	err := s.Delete(ctx, "/widgets/ns/ok", s.newFunc(), nil, nil, nil, unsafe)
	if !errors.Is(err, storage.ErrInvalidObj) || len(rawGet(t, s, "/widgets/ns/ok").Kvs) != 1 {
		t.Fatalf("unsafe delete of a readable object: %v", err)
	}

	ek, _ := s.prepareKey("/widgets/ns/bad")
	if _, err := etcdServer.Client.Put(ctx, ek, "garbage"); err != nil {
		t.Fatal(err)
	}
	good, err := runtime.Encode(s.codec, testWidget("bad", nil))
	if err != nil {
		t.Fatal(err)
	}
	repair := func(ctx context.Context, obj runtime.Object) error {
		if obj != nil {
			t.Errorf("validateDeletion got %T on the unsafe path, want nil", obj)
		}
		_, err := etcdServer.Client.Put(ctx, ek, string(good))
		return err
	}
	err = s.Delete(ctx, "/widgets/ns/bad", s.newFunc(), nil, repair, nil, unsafe)
	if !errors.Is(err, storage.ErrInvalidObj) || len(rawGet(t, s, "/widgets/ns/bad").Kvs) != 1 {
		t.Fatalf("unsafe delete of an object repaired meanwhile: %v", err)
	}

	if _, err := etcdServer.Client.Put(ctx, ek, "garbage again"); err != nil {
		t.Fatal(err)
	}
	no := false
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, SendInitialEvents: &no, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Delete(ctx, "/widgets/ns/bad", s.newFunc(), nil, nil, nil, unsafe); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Reason != metav1.StatusReasonStoreReadError ||
		!strings.Contains(st.Message, "saw a DELETED event, but object data is corrupt") {
		t.Fatalf("watch event for the unsafe delete: %s %#v", ev.Type, ev.Object)
	}
	expectClosed(t, w)
}
