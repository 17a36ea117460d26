package storage_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestEncodingsMadeOncePerFormat: concurrent readers of a format share one
// encoding made once; another format is made on its own; an encode error
// reaches every reader of that format; a seeded format is never encoded.
func TestEncodingsMadeOncePerFormat(t *testing.T) {
	e := storage.NewEncodings("seeded", []byte("cached"))
	var calls atomic.Int64
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() {
			b, err := e.Get("json", func() ([]byte, error) { calls.Add(1); return []byte("made"), nil })
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	if calls.Load() != 1 {
		t.Fatalf("encoded %d times, want once", calls.Load())
	}
	for _, b := range got {
		if &b[0] != &got[0][0] {
			t.Fatal("readers got different copies")
		}
	}
	b, err := e.Get("seeded", func() ([]byte, error) { t.Error("a seeded format was encoded"); return nil, nil })
	if err != nil || string(b) != "cached" {
		t.Fatalf("seeded: %q, %v", b, err)
	}
	boom := errors.New("boom")
	for range 2 {
		if _, err := e.Get("broken", func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
			t.Fatalf("err %v, want the encode error", err)
		}
	}
}

// TestEncodedObjectUnwraps: the wrapper delegates its kind and deep-copies
// to the plain object.
func TestEncodedObjectUnwraps(t *testing.T) {
	w := widget.NewWidget("ns", "a")
	o := &storage.EncodedObject{Object: w, Encodings: storage.NewEncodings("", nil)}
	if o.GetObjectKind() != w.GetObjectKind() {
		t.Fatal("kind not delegated")
	}
	cp, ok := o.DeepCopyObject().(*widget.Widget)
	if !ok || cp == w || cp.Name != "a" {
		t.Fatalf("DeepCopyObject gave %T %v", o.DeepCopyObject(), cp)
	}
}

// TestEncodedObjectCacheEncodeShared: watchers of one change (each with its
// own wrapper, sharing the change's Encodings) encoding it at once through
// runtime.CacheableObject in two formats get one encoding per encoder
// identifier, the same bytes each; encoders own what they encode, so the
// shared object is never changed; GetObject hands out a copy; an encode
// error reaches the caller with nothing written.
func TestEncodedObjectCacheEncodeShared(t *testing.T) {
	w := widget.NewWidget("ns", "a")
	enc := storage.NewEncodings("", nil)
	wrappers := []runtime.CacheableObject{
		&storage.EncodedObject{Object: w, Encodings: enc},
		&storage.EncodedObject{Object: w, Encodings: enc},
	}
	var calls atomic.Int64
	encode := func(obj runtime.Object, out io.Writer) error {
		calls.Add(1)
		obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Kind: "Changed"}) // as versioning codecs do
		obj.(*widget.Widget).Name = "changed by the encoder"
		return json.NewEncoder(out).Encode(obj)
	}
	ids := []runtime.Identifier{`{"name":"json"}`, `{"name":"watch"}`}
	const watchers = 32
	got := make([][2]bytes.Buffer, watchers)
	var wg sync.WaitGroup
	for i := range watchers {
		wg.Go(func() {
			for j, id := range ids {
				if err := wrappers[i%2].CacheEncode(id, encode, &got[i][j]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if calls.Load() != int64(len(ids)) {
		t.Fatalf("encoded %d times, want once per identifier (%d)", calls.Load(), len(ids))
	}
	for i := range watchers {
		for j := range ids {
			if got[i][j].Len() == 0 || got[i][j].String() != got[0][j].String() {
				t.Fatalf("watcher %d format %d got %q, watcher 0 %q", i, j, got[i][j].String(), got[0][j].String())
			}
		}
	}
	if w.Name != "a" || w.Kind != "Widget" {
		t.Fatalf("an encoder changed the shared object: %s %q", w.Kind, w.Name)
	}
	cp, ok := wrappers[0].GetObject().(*widget.Widget)
	if !ok || cp == w || cp.Name != "a" {
		t.Fatalf("GetObject gave %T %v, want a copy of the plain object", wrappers[0].GetObject(), cp)
	}
	boom := errors.New("boom")
	var b bytes.Buffer
	err := wrappers[1].CacheEncode("broken", func(runtime.Object, io.Writer) error { return boom }, &b)
	if !errors.Is(err, boom) || b.Len() != 0 {
		t.Fatalf("encode error: %v, wrote %q", err, b.String())
	}
}
