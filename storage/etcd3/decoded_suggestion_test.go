package etcd3

import (
	"context"
	"io"
	"reflect"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// countedCodec counts a codec's encodings and decodings.
type countedCodec struct {
	runtime.Codec
	encodes, decodes atomic.Int64
}

func (c *countedCodec) Encode(obj runtime.Object, w io.Writer) error {
	c.encodes.Add(1)
	return c.Codec.Encode(obj, w)
}

func (c *countedCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	c.decodes.Add(1)
	return c.Codec.Decode(data, defaults, into)
}

// counts returns and resets the counts.
func (c *countedCodec) counts() (encodes, decodes int64) {
	return c.encodes.Swap(0), c.decodes.Swap(0)
}

func countedCodecStore(t *testing.T) (*Store, *countedCodec) {
	t.Helper()
	codec := &countedCodec{Codec: widget.Codec}
	return newTestStore(t, func(c *Config) { c.Codec = codec }), codec
}

// storedWidget creates ns/name and returns the store's decoding of it.
func storedWidget(t *testing.T, s *Store, name string) *widget.Widget {
	t.Helper()
	w := testWidget(name, map[string]string{"app": "x"})
	w.Spec.Replicas = 3
	mustCreate(t, s, "/widgets/ns/"+name, w)
	got := &widget.Widget{}
	if err := s.Get(testCtx(t), "/widgets/ns/"+name, storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	return got
}

// A no-op update of a suggestion marked as the store's own decoding fills
// the destination with a copy of it instead of decoding the stored value
// again: the same object, no decoding. The suggestion is not modified.
func TestNoopUpdateOfDecodedSuggestionCopiesIt(t *testing.T) {
	s, codec := countedCodecStore(t)
	cached := storedWidget(t, s, "a")
	keep := cached.DeepCopy()

	calls := 0
	codec.counts()
	marked := &widget.Widget{}
	if err := s.GuaranteedUpdate(testCtx(t), "/widgets/ns/a", marked, false, nil, unchanged(&calls), cached, storage.UpdateOptions{SuggestionDecoded: true}); err != nil {
		t.Fatal(err)
	}
	if _, decodes := codec.counts(); decodes != 0 {
		t.Errorf("a no-op update of a decoded suggestion decoded %d times, want 0", decodes)
	}
	plain := &widget.Widget{}
	if err := s.GuaranteedUpdate(testCtx(t), "/widgets/ns/a", plain, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, decodes := codec.counts(); decodes != 1 {
		t.Errorf("a no-op update of an unmarked suggestion decoded %d times, want 1", decodes)
	}
	if !reflect.DeepEqual(marked, plain) {
		t.Errorf("copied destination %+v differs from the decoded one %+v", marked, plain)
	}
	if !reflect.DeepEqual(cached, keep) {
		t.Errorf("the suggestion was modified: %+v, was %+v", cached, keep)
	}
}

// A delete of a suggestion marked as the store's own decoding neither
// encodes nor decodes it: out is a copy of it at the delete's revision, the
// object an unmarked delete decodes.
func TestDeleteOfDecodedSuggestionCopiesIt(t *testing.T) {
	s, codec := countedCodecStore(t)
	del := func(decoded bool) (*widget.Widget, int64) {
		cached := storedWidget(t, s, "a")
		codec.counts()
		out := &widget.Widget{}
		if err := s.Delete(testCtx(t), "/widgets/ns/a", out, nil, nil, cached, storage.DeleteOptions{SuggestionDecoded: decoded}); err != nil {
			t.Fatal(err)
		}
		encodes, decodes := codec.counts()
		return out, encodes + decodes
	}
	marked, n := del(true)
	if n != 0 {
		t.Errorf("a delete of a decoded suggestion encoded or decoded %d times, want 0", n)
	}
	if rv, cur := rvOfInt(t, marked), currentRev(t); rv != cur {
		t.Errorf("out has rv %d, want the delete's revision %d", rv, cur)
	}
	plain, n := del(false)
	if n != 2 {
		t.Errorf("a delete of an unmarked suggestion encoded and decoded %d times, want 2", n)
	}
	marked.ResourceVersion, plain.ResourceVersion = "", ""
	if !reflect.DeepEqual(marked, plain) {
		t.Errorf("copied out %+v differs from the decoded one %+v", marked, plain)
	}
}

// The mark is a promise about the suggestion, not a way around etcd: a
// marked suggestion that etcd has moved past is still caught by the
// compare-and-swap, and out is the state the delete removed.
func TestDeleteOfStaleDecodedSuggestion(t *testing.T) {
	s := newTestStore(t)
	cached := storedWidget(t, s, "a")
	if err := s.GuaranteedUpdate(testCtx(t), "/widgets/ns/a", &widget.Widget{}, false, nil, bump, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := &widget.Widget{}
	if err := s.Delete(testCtx(t), "/widgets/ns/a", out, nil, nil, cached, storage.DeleteOptions{SuggestionDecoded: true}); err != nil {
		t.Fatal(err)
	}
	if out.Spec.Replicas != 4 {
		t.Errorf("delete returned replicas %d, want the stored 4 (not the suggestion's 3)", out.Spec.Replicas)
	}
}

// A no-op update of a state read from etcd fills the destination with a
// copy of that read's decoding, taken before tryUpdate ran: one decoding
// per update (the read's), the object Get returns.
func TestNoopUpdateOfReadStateDecodesOnce(t *testing.T) {
	s, codec := countedCodecStore(t)
	stored := storedWidget(t, s, "a")
	calls := 0
	codec.counts()
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(testCtx(t), "/widgets/ns/a", out, false, nil, unchanged(&calls), nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, decodes := codec.counts(); decodes != 1 {
		t.Errorf("a no-op update decoded %d times, want 1 (the read)", decodes)
	}
	if !reflect.DeepEqual(out, stored) {
		t.Errorf("no-op update returned %+v, want the stored %+v", out, stored)
	}
	// tryUpdate may scribble on its input and return another object that
	// encodes as stored: still a no-op, answered with the stored object.
	scribble := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		orig := w.DeepCopy()
		w.Labels["app"] = "scribbled"
		w.Spec.Replicas = 42
		return orig, nil, nil
	}
	out = &widget.Widget{}
	if err := s.GuaranteedUpdate(testCtx(t), "/widgets/ns/a", out, false, nil, scribble, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, stored) {
		t.Errorf("no-op update returned %+v, want the stored %+v", out, stored)
	}
}

// A delete of a state read from etcd fills out with that read's decoding:
// one decoding per delete, the object Get returned, at the delete's
// revision; what validateDeletion does to the object it is given does not
// reach out.
func TestDeleteOfReadStateDecodesOnce(t *testing.T) {
	s, codec := countedCodecStore(t)
	stored := storedWidget(t, s, "a")
	scribble := func(_ context.Context, obj runtime.Object) error {
		obj.(*widget.Widget).Labels["app"] = "scribbled"
		return nil
	}
	codec.counts()
	out := &widget.Widget{}
	if err := s.Delete(testCtx(t), "/widgets/ns/a", out, nil, scribble, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, decodes := codec.counts(); decodes != 1 {
		t.Errorf("a delete decoded %d times, want 1 (the read)", decodes)
	}
	if rv, cur := rvOfInt(t, out), currentRev(t); rv != cur {
		t.Errorf("out has rv %d, want the delete's revision %d", rv, cur)
	}
	out.ResourceVersion = stored.ResourceVersion
	if !reflect.DeepEqual(out, stored) {
		t.Errorf("delete returned %+v, want the stored %+v", out, stored)
	}
}
