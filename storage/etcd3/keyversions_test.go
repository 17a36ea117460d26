package etcd3

import (
	"errors"
	"testing"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestKeyVersions lists keys with their objects' RVs at a past revision,
// in key order, without the values; a compacted revision is 410.
func TestKeyVersions(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := rvOf(t, mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil)))
	b := rvOf(t, mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil)))
	mustCreate(t, s, "/widgets/other/c", testWidget("c", nil))
	at := b
	a2 := rvOf(t, updateTo(t, s, "/widgets/ns/a", func(w *widget.Widget) { w.Spec.Replicas++ }))
	collect := func(prefix string, rev int64) ([]storage.KeyVersion, error) {
		var out []storage.KeyVersion
		err := s.KeyVersions(ctx, prefix, rev, func(kv storage.KeyVersion) error {
			out = append(out, kv)
			return nil
		})
		return out, err
	}
	got, err := collect("/widgets/ns/", int64(at))
	if err != nil {
		t.Fatal(err)
	}
	want := []storage.KeyVersion{{Key: "/widgets/ns/a", RV: a}, {Key: "/widgets/ns/b", RV: b}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("at %d: %v, want %v", at, got, want)
	}
	got, err = collect("/widgets/ns/", int64(a2))
	if err != nil || len(got) != 2 || got[0].RV != a2 {
		t.Fatalf("at %d: %v, %v; want a@%d first", a2, got, err, a2)
	}
	stop := errors.New("stop")
	if err := s.KeyVersions(ctx, "/widgets/", int64(a2), func(storage.KeyVersion) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("fn's error: %v, want it returned", err)
	}
	if err := etcdServer.Compact(ctx, int64(a2)); err != nil {
		t.Fatal(err)
	}
	if _, err := collect("/widgets/ns/", int64(at)); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("at a compacted revision: %v, want 410", err)
	}
}
