package etcd3

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func TestCreateGetTyped(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	out := &widget.Widget{}
	if err := s.Create(ctx, "/widgets/ns/a", testWidget("a", map[string]string{"x": "1"}), out, 0); err != nil {
		t.Fatal(err)
	}
	raw := rawGet(t, s, "/widgets/ns/a")
	if len(raw.Kvs) != 1 {
		t.Fatalf("raw etcd has %d kvs", len(raw.Kvs))
	}
	kv := raw.Kvs[0]
	if got := rvOf(t, out); got != uint64(kv.ModRevision) || kv.CreateRevision != kv.ModRevision {
		t.Fatalf("out RV %d, etcd mod rev %d create rev %d", got, kv.ModRevision, kv.CreateRevision)
	}
	if bytes.Contains(kv.Value, []byte("resourceVersion")) {
		t.Fatalf("stored bytes carry a resourceVersion: %s", kv.Value)
	}
	if !bytes.Contains(kv.Value, []byte(`"kind":"Widget"`)) {
		t.Fatalf("stored bytes lack the kind: %s", kv.Value)
	}
	got := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Name != "a" || got.Labels["x"] != "1" || got.ResourceVersion != out.ResourceVersion {
		t.Fatalf("get returned %+v", got.ObjectMeta)
	}
	err := s.Create(ctx, "/widgets/ns/a", testWidget("a", nil), nil, 0)
	if !errors.Is(err, storage.ErrKeyExists) {
		t.Fatalf("second create: %v, want ErrKeyExists", err)
	}
	if raw2 := rawGet(t, s, "/widgets/ns/a"); raw2.Kvs[0].ModRevision != kv.ModRevision {
		t.Fatal("failed create changed the stored object")
	}
}

func TestCreateGetUnstructured(t *testing.T) {
	s := newTestStore(t, unstructuredConfig)
	ctx := testCtx(t)
	in := widget.NewUnstructuredWidget("ns", "u", map[string]string{"app": "x"})
	_ = unstructured.SetNestedField(in.Object, "node-1", "spec", "nodeName")
	out := &unstructured.Unstructured{}
	if err := s.Create(ctx, "/widgets/ns/u", in, out, 0); err != nil {
		t.Fatal(err)
	}
	got := &unstructured.Unstructured{}
	if err := s.Get(ctx, "/widgets/ns/u", storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	node, _, _ := unstructured.NestedString(got.Object, "spec", "nodeName")
	if got.GetName() != "u" || node != "node-1" || got.GetResourceVersion() != out.GetResourceVersion() || got.GetResourceVersion() == "" {
		t.Fatalf("got %v", got.Object)
	}
	list := &unstructured.UnstructuredList{}
	if err := s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].GetName() != "u" || list.GetResourceVersion() == "" {
		t.Fatalf("list: %+v", list)
	}
}

func TestGetRVAndNotFound(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	created := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	rv := rvOf(t, created)
	for _, tc := range []struct {
		name    string
		rv      storage.RV
		wantErr *storage.Error
	}{
		{"latest", storage.RV{}, nil},
		{"any", storage.RVAny, nil},
		{"exact current", rvAt(rv), nil},
		{"too large", rvAt(rv + 1000000), storage.ErrTooLargeResourceVersion},
		{"beyond any revision", storage.RVAt(1 << 63), storage.ErrTooLargeResourceVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := &widget.Widget{}
			err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{ResourceVersion: tc.rv}, got)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.Name != "a" {
				t.Fatalf("err %v, got %q", err, got.Name)
			}
		})
	}
	if err := s.Get(ctx, "/widgets/ns/missing", storage.GetOptions{}, &widget.Widget{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	w := testWidget("stale", nil)
	if err := s.Get(ctx, "/widgets/ns/missing", storage.GetOptions{IgnoreNotFound: true}, w); err != nil || w.Name != "" {
		t.Fatalf("ignoreNotFound: %v, object %q not zeroed", err, w.Name)
	}
}

func TestGuaranteedUpdate(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	created := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil)).(*widget.Widget)
	bump := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		w.Spec.Replicas++
		return w, nil, nil
	}
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, bump, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out.Spec.Replicas != 1 || rvOf(t, out) <= rvOf(t, created) {
		t.Fatalf("after update: %+v", out)
	}
	// A stale suggestion is retried from a fresh read: the update applies
	// to the current state, not the cached one.
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, bump, created.DeepCopy(), storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out.Spec.Replicas != 2 {
		t.Fatalf("stale suggestion: replicas %d, want 2", out.Spec.Replicas)
	}
	// A no-op update writes nothing.
	before := rawGet(t, s, "/widgets/ns/a").Kvs[0].ModRevision
	noop := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, noop, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := rawGet(t, s, "/widgets/ns/a").Kvs[0].ModRevision; after != before || rvOf(t, out) != uint64(before) {
		t.Fatalf("no-op update wrote: mod rev %d -> %d (out RV %d)", before, after, rvOf(t, out))
	}
	// Preconditions.
	uid := "other"
	err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, storage.NewUIDPreconditions(uid), bump, nil, storage.UpdateOptions{})
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("precondition: %v", err)
	}
	// tryUpdate errors come back as is.
	boom := errors.New("boom")
	fail := func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) { return nil, nil, boom }
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, fail, nil, storage.UpdateOptions{}); err != boom {
		t.Fatalf("tryUpdate error: %v", err)
	}
	// Not found, then ignoreNotFound creating the key.
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/b", out, false, nil, bump, nil, storage.UpdateOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
	mk := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		return testWidget("b", nil), nil, nil
	}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/b", out, true, nil, mk, nil, storage.UpdateOptions{}); err != nil || out.Name != "b" {
		t.Fatalf("ignoreNotFound create: %v %q", err, out.Name)
	}
}

func TestDelete(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	created := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil)).(*widget.Widget)
	uid := "nope"
	out := &widget.Widget{}
	err := s.Delete(ctx, "/widgets/ns/a", out, storage.NewUIDPreconditions(uid), nil, nil, storage.DeleteOptions{})
	if !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("precondition: %v", err)
	}
	denied := errors.New("denied")
	err = s.Delete(ctx, "/widgets/ns/a", out, nil, func(_ context.Context, _ runtime.Object) error { return denied }, nil, storage.DeleteOptions{})
	if err != denied {
		t.Fatalf("validation: %v", err)
	}
	if err := s.Delete(ctx, "/widgets/ns/a", out, nil, nil, created, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if out.Name != "a" || rvOf(t, out) <= rvOf(t, created) {
		t.Fatalf("deleted object %q RV %d (created %d)", out.Name, rvOf(t, out), rvOf(t, created))
	}
	if n := len(rawGet(t, s, "/widgets/ns/a").Kvs); n != 0 {
		t.Fatal("key still in etcd")
	}
	if err := s.Delete(ctx, "/widgets/ns/a", out, nil, nil, nil, storage.DeleteOptions{}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}
