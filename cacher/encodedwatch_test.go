package cacher_test

import (
	"bytes"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// namedCodec keeps whole objects (resourceVersion included) and names its
// format, so the cache's encodings can serve readers of that format.
type namedCodec struct{ watchcache.RuntimeCodec }

func (namedCodec) Format() string { return "test-json" }

func watchEncoded(t *testing.T, c *cacher.Cacher, rv storage.RV) watch.Interface {
	t.Helper()
	w, err := c.WatchEncoded(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
		Predicate: storage.Everything})
	if err != nil {
		t.Fatalf("WatchEncoded from %q: %v", rv, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func encodedObject(t *testing.T, ev watch.Event) *storage.EncodedObject {
	t.Helper()
	o, ok := ev.Object.(*storage.EncodedObject)
	if !ok {
		t.Fatalf("%s event carries %T, want *storage.EncodedObject", ev.Type, ev.Object)
	}
	return o
}

// TestWatchEncodedSharesEncodings: the watchers of one change get the same
// Encodings, holding the cache's encoding in its codec's format; initial
// events carry the cached encoding too; Watch delivers plain objects.
func TestWatchEncodedSharesEncodings(t *testing.T) {
	codec := namedCodec{watchcache.RuntimeCodec{Codec: widget.Codec, New: widget.New}}
	store := newStore(t, embedtest.Prefix(t), false)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.Codec = codec })
	if got := c.EncodedFormat(); got != "test-json" {
		t.Fatalf("EncodedFormat %q, want the codec's", got)
	}
	from := create(t, store, "ns", "a", nil)
	w1, w2 := watchEncoded(t, c, rvAt(from)), watchEncoded(t, c, rvAt(from))
	plain := watchAll(t, c, rvAt(from))
	create(t, store, "ns", "b", nil)

	o1, o2 := encodedObject(t, next(t, w1, 10*time.Second)), encodedObject(t, next(t, w2, 10*time.Second))
	if o1.Encodings != o2.Encodings {
		t.Fatal("the watchers of one change got different encodings")
	}
	if ev := next(t, plain, 10*time.Second); isEncoded(ev.Object) {
		t.Fatalf("Watch delivered %T, want the object itself", ev.Object)
	}
	expectCached(t, codec, o1)

	// Initial events: encodings of their own, holding the cached bytes.
	initial := watchEncoded(t, c, storage.RVAny)
	for range 2 {
		expectCached(t, codec, encodedObject(t, next(t, initial, 10*time.Second)))
	}
}

func isEncoded(obj runtime.Object) bool {
	_, ok := obj.(*storage.EncodedObject)
	return ok
}

// expectCached checks that o's encodings hold, without encoding, what the
// codec makes of o's object.
func expectCached(t *testing.T, codec namedCodec, o *storage.EncodedObject) {
	t.Helper()
	got, err := o.Encodings.Get(codec.Format(), func() ([]byte, error) {
		t.Error("the cached encoding is not in the event's encodings")
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := codec.Encode(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("cached encoding %s, want %s", got, want)
	}
}
