package storage_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/internal/testapi"
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
	w := testapi.Make("ns", "a", nil)
	o := &storage.EncodedObject{Object: w, Encodings: storage.NewEncodings("", nil)}
	if o.GetObjectKind() != w.GetObjectKind() {
		t.Fatal("kind not delegated")
	}
	cp, ok := o.DeepCopyObject().(*testapi.Widget)
	if !ok || cp == w || cp.Name != "a" {
		t.Fatalf("DeepCopyObject gave %T %v", o.DeepCopyObject(), cp)
	}
}
