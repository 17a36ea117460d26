package cacher_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/storage/value"
)

// sourceMetrics counts where lists were served from.
type sourceMetrics struct {
	countingMetrics
	fromCache, fromStorage atomic.Int64
}

func (m *sourceMetrics) ListServed(source string) {
	if source == "cache" {
		m.fromCache.Add(1)
	} else {
		m.fromStorage.Add(1)
	}
}

func aesKeys(t *testing.T, names ...string) value.Transformer {
	t.Helper()
	var keys []value.AESGCMKey
	for _, n := range names {
		keys = append(keys, value.AESGCMKey{Name: n, Secret: bytes.Repeat([]byte(n[:1]), 32)})
	}
	tr, err := value.NewAESGCM(value.AESGCMConfig{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func newEncryptedStore(t *testing.T, tr value.Transformer) *etcd3.Store {
	t.Helper()
	if _, err := etcd.Client.Delete(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix()); err != nil {
		t.Fatal(err) // start empty when the test runs again (-count > 1)
	}
	s, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets", Transformer: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func listZero(t *testing.T, c *cacher.Cacher) (*widget.WidgetList, error) {
	t.Helper()
	out := &widget.WidgetList{}
	err := c.GetList(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true,
		Predicate: storage.Everything}, out)
	return out, err
}

// A key rotation that leaves every value readable (a new first key, the old
// one still decrypting) sends reads to etcd until the cache is relisted
// through the new transformer, then back to the cache; no watch ends.
func TestTransformerRotationKeepsWatches(t *testing.T) {
	store := newEncryptedStore(t, aesKeys(t, "k1"))
	m := &sourceMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.Metrics = m })
	from := create(t, c, "ns", "a", nil)
	w := watchAll(t, c, rvAt(from))

	store.SetTransformer(aesKeys(t, "k2", "k1"))
	before := m.fromStorage.Load()
	if _, err := listZero(t, c); err != nil {
		t.Fatal(err)
	}
	if m.fromStorage.Load() != before+1 {
		t.Fatal("a list right after the transformer changed was served from the cache")
	}
	b := create(t, c, "ns", "b", nil)
	expectRVs(t, w, []uint64{b})

	deadline := time.Now().Add(10 * time.Second)
	for cached := m.fromCache.Load(); m.fromCache.Load() == cached; {
		if time.Now().After(deadline) {
			t.Fatal("lists still served by the storage 10 s after the rotation")
		}
		time.Sleep(20 * time.Millisecond) // poll: the relist is asynchronous
		l, err := listZero(t, c)
		if err != nil || len(l.Items) != 2 {
			t.Fatalf("list: %d items, %v; want a and b", len(l.Items), err)
		}
	}
	if n := m.reinitialized.Load(); n != 0 {
		t.Errorf("re-initialised %d times, want 0", n)
	}
	c2 := create(t, c, "ns", "c", nil)
	expectRVs(t, w, []uint64{c2})
}

// Removing the key the values were encrypted with makes them unreadable:
// reads through the cacher fail as etcd's do, naming the keys, instead of
// serving the decoded copies; watches covering them end with a StoreReadError;
// a watch from an explicit RV started meanwhile is served from etcd's
// history (and sees the same error, or the events after the RV) and moves
// to the cache when restoring the key brings it back.
func TestTransformerKeyRemovalEndsWatches(t *testing.T) {
	store := newEncryptedStore(t, aesKeys(t, "k1"))
	m := &sourceMetrics{}
	logs := &syncLog{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ReadyWaitTimeout = 300 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	rvA := create(t, c, "ns", "a", nil)
	rvB := create(t, c, "ns", "b", nil)
	w := watchAll(t, c, rvAt(rvB))
	// What ends w is values the cache held becoming unreadable while w is
	// in live dispatch. The cacher applies the writes above and starts w
	// asynchronously: on a loaded machine the key could go before the
	// cache held a and b (its relist then lists around them, and no watch
	// ends) or before w joined (then it is a watch started meanwhile).
	eventually(t, 30*time.Second, "the cache holding a and b, w in live dispatch", func() error {
		cached := m.fromCache.Load()
		if l, err := listZero(t, c); err != nil || len(l.Items) != 2 || m.fromCache.Load() == cached {
			return fmt.Errorf("a list from the cache: %d items (%v, from the cache: %t), want a and b",
				len(l.Items), err, m.fromCache.Load() > cached)
		}
		if n := cacher.LiveWatchersForTest(c); n != 1 {
			return fmt.Errorf("%d watchers in live dispatch, want w", n)
		}
		return nil
	})

	store.SetTransformer(aesKeys(t, "k2"))
	_, err := listZero(t, c)
	var se *storage.Error
	if !storage.IsCode(err, storage.CodeCorruptObj) || !errors.As(err, &se) || len(se.CorruptKeys) != 2 {
		t.Fatalf("list after the key was removed: %v, want a corrupt-object error naming a and b", err)
	}
	if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAny}, &widget.Widget{}); !storage.IsCode(err, storage.CodeCorruptObj) {
		t.Fatalf("get at RV 0 after the key was removed: %v, want corrupt object", err)
	}
	expectEndedFor(t, w, key("ns", "a"), logs)
	// The relist through the new transformer is read around the unreadable
	// values (see corrupt.go): no re-initialisation, the watches covering
	// them end.
	if n := m.reinitialized.Load(); n != 0 {
		t.Errorf("re-initialised %d times, want 0", n)
	}
	// From etcd's history: b's creation cannot be read.
	// (The storage key is for the log: the client is not told it.)
	ev := next(t, watchAll(t, c, rvAt(rvA)), 10*time.Second)
	seen, _ := json.Marshal(ev.Object)
	if ev.Type != watch.Error || !strings.Contains(ev.Object.(*metav1.Status).Message, "cannot be decoded") ||
		strings.Contains(string(seen), key("ns", "b")) {
		t.Fatalf("watch from a's RV after the key was removed: %s %s, want a corrupt-object error not naming b's key", ev.Type, seen)
	}
	fromEtcd := watchAll(t, c, rvAt(rvB)) // nothing to read after b yet

	store.SetTransformer(aesKeys(t, "k2", "k1"))
	if err := c.WaitReady(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	l, err := listZero(t, c)
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("list after the key came back: %d items, %v; want a and b", len(l.Items), err)
	}
	w2 := watchAll(t, c, mustRV(t, l.ResourceVersion))
	rv := create(t, c, "ns", "c", nil)
	expectRVs(t, w2, []uint64{rv})
	expectRVs(t, fromEtcd, []uint64{rv})
}
