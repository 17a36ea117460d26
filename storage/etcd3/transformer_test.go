package etcd3

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

func aesStore(t *testing.T, prefix string, keys ...value.AESGCMKey) *Store {
	t.Helper()
	tr, err := value.NewAESGCM(value.AESGCMConfig{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return newTestStore(t, func(c *Config) { c.Transformer = tr; c.Prefix = prefix })
}

func secret(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func TestAESGCMEndToEnd(t *testing.T) {
	ctx := testCtx(t)
	prefix := uniquePrefix(t)
	k1 := value.AESGCMKey{Name: "k1", Secret: secret(1)}
	s := aesStore(t, prefix, k1)
	in := testWidget("a", nil)
	in.Spec.Data = "plaintext-marker"
	created := mustCreate(t, s, "/widgets/ns/a", in)

	raw := rawGet(t, s, "/widgets/ns/a").Kvs[0]
	if bytes.Contains(raw.Value, []byte("plaintext-marker")) || !bytes.HasPrefix(raw.Value, []byte(value.AESGCMPrefix+"k1:")) {
		t.Fatalf("stored value is not encrypted: %q", raw.Value)
	}
	got := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, got); err != nil || got.Spec.Data != "plaintext-marker" {
		t.Fatalf("get through the transformer: %v %q", err, got.Spec.Data)
	}

	t.Run("wrong key is a corrupt object whose key only its log text names", func(t *testing.T) {
		wrong := aesStore(t, prefix, value.AESGCMKey{Name: "k1", Secret: secret(9)})
		err := wrong.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{})
		if !errors.Is(err, storage.ErrCorruptObj) || !errors.Is(err, value.ErrDecrypt) || !strings.Contains(err.Error(), "/widgets/ns/a") {
			t.Fatalf("get with the wrong key: %v", err)
		}
		err = wrong.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, &widget.WidgetList{})
		if !errors.Is(err, storage.ErrCorruptObj) {
			t.Fatalf("list with the wrong key: %v", err)
		}
		w, err := wrong.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		ev := expectEvent(t, w, watch.Error, "", 0)
		if strings.Contains(statusMessage(ev), "/widgets/ns/a") {
			t.Fatalf("watch error event names the storage key: %v", ev.Object)
		}
		expectClosed(t, w)
	})

	t.Run("rotation marks stale and the next update rewrites", func(t *testing.T) {
		rotated := aesStore(t, prefix, value.AESGCMKey{Name: "k2", Secret: secret(2)}, k1)
		noop := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) { return in, nil, nil }
		out := &widget.Widget{}
		if err := rotated.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, noop, nil, storage.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		after := rawGet(t, s, "/widgets/ns/a").Kvs[0]
		if after.ModRevision == raw.ModRevision || !bytes.HasPrefix(after.Value, []byte(value.AESGCMPrefix+"k2:")) {
			t.Fatalf("stale value not rewritten: rev %d -> %d, %q", raw.ModRevision, after.ModRevision, after.Value[:24])
		}
		if rvOf(t, out) != uint64(after.ModRevision) || out.Spec.Data != "plaintext-marker" {
			t.Fatalf("destination %s %q", out.ResourceVersion, out.Spec.Data)
		}
		// Now current: a second no-op writes nothing.
		if err := rotated.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, noop, nil, storage.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		if again := rawGet(t, s, "/widgets/ns/a").Kvs[0]; again.ModRevision != after.ModRevision {
			t.Fatal("fresh value rewritten by a no-op update")
		}
		// The store with only k1 can no longer read it.
		if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{}); !errors.Is(err, storage.ErrCorruptObj) {
			t.Fatalf("old-key store after rotation: %v", err)
		}
	})

	t.Run("value moved to another key does not decrypt", func(t *testing.T) {
		cur := rawGet(t, s, "/widgets/ns/a").Kvs[0]
		ek, _ := s.prepareKey("/widgets/ns/moved")
		if _, err := etcdServer.Client.Put(ctx, ek, string(cur.Value)); err != nil {
			t.Fatal(err)
		}
		rotated := aesStore(t, prefix, value.AESGCMKey{Name: "k2", Secret: secret(2)})
		if err := rotated.Get(ctx, "/widgets/ns/moved", storage.GetOptions{}, &widget.Widget{}); !errors.Is(err, storage.ErrCorruptObj) {
			t.Fatalf("moved value: %v", err)
		}
	})

	t.Run("corrupt objects delete only with IgnoreStoreReadError", func(t *testing.T) {
		out := &widget.Widget{}
		err := s.Delete(ctx, "/widgets/ns/a", out, nil, nil, nil, storage.DeleteOptions{})
		if !errors.Is(err, storage.ErrCorruptObj) {
			t.Fatalf("plain delete of a corrupt object: %v", err)
		}
		if err := s.Delete(ctx, "/widgets/ns/a", out, nil, nil, nil, storage.DeleteOptions{IgnoreStoreReadError: true}); err != nil {
			t.Fatal(err)
		}
		if len(rawGet(t, s, "/widgets/ns/a").Kvs) != 0 {
			t.Fatal("corrupt object not deleted")
		}
	})
	_ = created
}

// SetTransformer takes effect for the next read and write, and calls every
// registered observer once; an unregistered observer is not called.
func TestSetTransformerNotifiesObservers(t *testing.T) {
	ctx := testCtx(t)
	k1 := value.AESGCMKey{Name: "k1", Secret: secret(1)}
	k2 := value.AESGCMKey{Name: "k2", Secret: secret(2)}
	s := aesStore(t, uniquePrefix(t), k1)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))

	var first, second int
	s.OnTransformerChange(func() { first++ })
	unregister := s.OnTransformerChange(func() { second++ })
	unregister()

	only2, err := value.NewAESGCM(value.AESGCMConfig{Keys: []value.AESGCMKey{k2}})
	if err != nil {
		t.Fatal(err)
	}
	s.SetTransformer(only2)
	if first != 1 || second != 0 {
		t.Fatalf("observers called %d and %d times, want 1 and 0 (unregistered)", first, second)
	}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{}); !storage.IsCode(err, storage.CodeCorruptObj) {
		t.Fatalf("get after the key was removed: %v, want a corrupt object", err)
	}
	mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
	if raw := rawGet(t, s, "/widgets/ns/b").Kvs[0]; !bytes.HasPrefix(raw.Value, []byte(value.AESGCMPrefix+"k2:")) {
		t.Fatalf("written after the change with %q, want key k2", raw.Value[:12])
	}
}
