package k8scompat_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	"github.com/listwatch/listwatch/k8scompat"
)

// TestShareWatchEncodings: over the cacher, the watches an apiserver serves
// get each event's object wrapped once for all of them as a
// runtime.CacheableObject, which encodes it once per encoder; other callers
// get the plain objects.
func TestShareWatchEncodings(t *testing.T) {
	ctx := ctxT(t)
	s, _ := podStorage(t, k8scompat.DecoratorConfig{}, nil)
	apiCtx := genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{IsResourceRequest: true, Verb: "watch"})
	opts := k8sstorage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: k8sstorage.Everything}
	w1, err := s.Watch(apiCtx, "/pods", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Stop()
	w2, err := s.Watch(apiCtx, "/pods", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	plain, err := s.Watch(ctx, "/pods", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Stop()
	if err := s.Create(ctx, "/pods/ns/a", newPod("a"), &example.Pod{}, 0); err != nil {
		t.Fatal(err)
	}
	e1, e2, e3 := <-w1.ResultChan(), <-w2.ResultChan(), <-plain.ResultChan()
	if _, ok := e3.Object.(*example.Pod); !ok {
		t.Fatalf("a watch outside an API request got %T, want the plain object", e3.Object)
	}
	co, ok := e1.Object.(runtime.CacheableObject)
	if !ok || e1.Object != e2.Object {
		t.Fatalf("watchers got %T and %T, want one shared CacheableObject", e1.Object, e2.Object)
	}
	encodes := 0
	encode := func(obj runtime.Object, w io.Writer) error {
		encodes++
		obj.(*example.Pod).Name = "changed by the encoder" // the encoder owns what it gets
		return json.NewEncoder(w).Encode(obj)
	}
	var b1, b2 bytes.Buffer
	if err := co.CacheEncode("json", encode, &b1); err != nil {
		t.Fatal(err)
	}
	if err := e2.Object.(runtime.CacheableObject).CacheEncode("json", encode, &b2); err != nil {
		t.Fatal(err)
	}
	if encodes != 1 || b1.String() != b2.String() {
		t.Fatalf("%d encodings (want 1), %q vs %q", encodes, b1.String(), b2.String())
	}
	if got := co.GetObject().(*example.Pod).Name; got != "a" {
		t.Fatalf("wrapped object changed by an encoder: name %q", got)
	}
}
