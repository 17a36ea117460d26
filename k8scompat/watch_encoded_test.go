package k8scompat_test

import (
	"bytes"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	"github.com/listwatch/listwatch/k8scompat"
	lwstorage "github.com/listwatch/listwatch/storage"
)

// TestShareWatchEncodings: over the cacher, the watches an apiserver serves
// get each event's object as a *storage.EncodedObject whose encodings all
// of them share, so apimachinery's encoders (here the versioning codec,
// which sets the kind of what it encodes) encode the event once for all of
// them and leave the shared object alone; other callers get the plain
// objects.
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
	o1, ok1 := e1.Object.(*lwstorage.EncodedObject)
	o2, ok2 := e2.Object.(*lwstorage.EncodedObject)
	if !ok1 || !ok2 || o1.Encodings != o2.Encodings {
		t.Fatalf("watchers got %T and %T, want *storage.EncodedObject sharing one Encodings", e1.Object, e2.Object)
	}
	gvk := o1.Object.GetObjectKind().GroupVersionKind()
	codec := codecs.LegacyCodec(examplev1.SchemeGroupVersion)
	var out [2]bytes.Buffer
	var wg sync.WaitGroup
	for i, o := range []*lwstorage.EncodedObject{o1, o2} {
		wg.Go(func() {
			if err := codec.Encode(o, &out[i]); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if out[0].Len() == 0 || out[0].String() != out[1].String() || !bytes.Contains(out[0].Bytes(), []byte(`"kind":"Pod"`)) {
		t.Fatalf("encodings %q and %q, want one encoding of the pod", out[0].String(), out[1].String())
	}
	cached, err := o1.Encodings.Get(string(codec.Identifier()), func() ([]byte, error) {
		t.Error("the codec's encoding was not kept in the shared Encodings")
		return nil, nil
	})
	if err != nil || !bytes.Equal(cached, out[0].Bytes()) {
		t.Fatalf("kept encoding %q, %v; want %q", cached, err, out[0].String())
	}
	if got := o1.Object.GetObjectKind().GroupVersionKind(); got != gvk {
		t.Fatalf("encoding changed the shared object's kind: %v, was %v", got, gvk)
	}
}

// TestShareWatchEncodingsNeedsEncodedWatcher: asking New to share watch
// encodings over a store that cannot watch with encodings is an error.
func TestShareWatchEncodingsNeedsEncodedWatcher(t *testing.T) {
	s, _ := podStorage(t, k8scompat.DecoratorConfig{Cache: func(schema.GroupResource) bool { return false }}, nil)
	if _, ok := s.Unwrap().(lwstorage.EncodedWatcher); ok {
		t.Fatalf("%T watches with encodings; the test needs a store that does not", s.Unwrap())
	}
	if _, err := k8scompat.New(k8scompat.Config{Storage: s.Unwrap(), ShareWatchEncodings: true}); err == nil {
		t.Fatal("New accepted ShareWatchEncodings over a store without WatchEncoded")
	}
}
