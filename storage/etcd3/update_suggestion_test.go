package etcd3

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// An update that starts from a suggestion of a key with a lease: the
// suggestion knows no TTL, so its compare-and-swap (which requires no
// lease) fails and tryUpdate runs again on the stored state with the real
// TTL. An update that passes that TTL on keeps a lease; the suggestion
// given is not modified.
func TestUpdateSuggestionOfLeasedKey(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := &widget.Widget{}
	if err := s.Create(ctx, "/widgets/ns/a", testWidget("a", map[string]string{"app": "x"}), cached, 600); err != nil {
		t.Fatal(err)
	}
	var seen []int64
	keepTold := func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		seen = append(seen, res.TTL)
		w := in.(*widget.Widget)
		w.Spec.Replicas++
		w.Labels["app"] = "changed"
		ttl := uint64(res.TTL)
		return w, &ttl, nil
	}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", &widget.Widget{}, false, nil, keepTold, cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] <= 0 || seen[1] > 630 {
		t.Errorf("tryUpdate was told TTLs %v, want [0 remaining] (the suggestion's, then etcd's)", seen)
	}
	if lease := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease; lease == 0 {
		t.Error("an update passing on the TTL it was told dropped the key's lease")
	}
	if cached.Spec.Replicas != 0 || cached.Labels["app"] != "x" {
		t.Errorf("the suggestion was modified: replicas %d, labels %v", cached.Spec.Replicas, cached.Labels)
	}
}

// A suggestion of a key without a lease that is current is written with
// one transaction: tryUpdate runs once, told TTL 0.
func TestUpdateSuggestionWithoutLease(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	calls := 0
	bump := func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		calls++
		w := in.(*widget.Widget)
		w.Spec.Replicas++
		return w, nil, nil
	}
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, bump, cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if calls != 1 || out.Spec.Replicas != 1 {
		t.Errorf("tryUpdate ran %d times, replicas %d; want once, 1", calls, out.Spec.Replicas)
	}
	if lease := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease; lease != 0 {
		t.Errorf("key got lease %x", lease)
	}
}
