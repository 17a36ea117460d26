package k8scompat

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/apis/example"
)

// TestCachingObjectConcurrentEncodes: many watchers encoding one shared
// event at once, in two formats, get one encoding per format, identical
// for all of them; setting the kind afterwards leaves the wrapped object
// alone and makes new encodings of a copy.
func TestCachingObjectConcurrentEncodes(t *testing.T) {
	pod := &example.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}
	co := newCachingObject(pod)
	var encodes atomic.Int32
	encode := func(obj runtime.Object, w io.Writer) error {
		encodes.Add(1)
		return json.NewEncoder(w).Encode(obj)
	}
	const watchers = 64
	out := make([][2]bytes.Buffer, watchers)
	var wg sync.WaitGroup
	for i := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, id := range []runtime.Identifier{"json", "json-pretty"} {
				if err := co.CacheEncode(id, encode, &out[i][j]); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n := encodes.Load(); n != 2 {
		t.Fatalf("%d encodings, want 2 (one per identifier)", n)
	}
	for i := range watchers {
		if out[i][0].String() != out[0][0].String() || out[i][0].Len() == 0 {
			t.Fatalf("watcher %d got %q, watcher 0 %q", i, out[i][0].String(), out[0][0].String())
		}
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	co.SetGroupVersionKind(gvk)
	if !pod.GetObjectKind().GroupVersionKind().Empty() {
		t.Fatalf("SetGroupVersionKind changed the wrapped object: %v", pod.GetObjectKind().GroupVersionKind())
	}
	var b bytes.Buffer
	if err := co.CacheEncode("json", encode, &b); err != nil {
		t.Fatal(err)
	}
	if encodes.Load() != 3 || !bytes.Contains(b.Bytes(), []byte(`"kind":"Pod"`)) {
		t.Fatalf("after SetGroupVersionKind: %d encodings (want 3), %s", encodes.Load(), b.String())
	}
}

// TestEncodingShareReusesWrapper: the watchers an object goes to get one
// wrapper, also when other objects were wrapped in between.
func TestEncodingShareReusesWrapper(t *testing.T) {
	s := newEncodingShare()
	a, b := &example.Pod{}, &example.Pod{}
	wa := s.wrap(a)
	if s.wrap(a) != wa {
		t.Fatal("second wrap of the same object made a new wrapper")
	}
	wb := s.wrap(b)
	if wb == wa || s.wrap(a) != wa || s.wrap(b) != wb {
		t.Fatal("wrappers not kept per object")
	}
}
