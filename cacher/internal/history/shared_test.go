package history

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

func TestScopeCovers(t *testing.T) {
	ns := Scope{Key: "/widgets/ns/", Recursive: true}
	for _, c := range []struct {
		s, o Scope
		want bool
	}{
		{ns, Scope{Key: "/widgets/ns/a"}, true},
		{ns, Scope{Key: "/widgets/ns/sub/", Recursive: true}, true},
		{ns, Scope{Key: "/widgets/other/", Recursive: true}, false},
		{ns, Scope{Key: "/widgets/", Recursive: true}, false},
		{Scope{Key: "/widgets/ns/a"}, Scope{Key: "/widgets/ns/a"}, true},
		{Scope{Key: "/widgets/ns/a"}, Scope{Key: "/widgets/ns/ab"}, false},
		{Scope{Key: "/widgets/ns/a"}, Scope{Key: "/widgets/ns/a", Recursive: true}, false},
	} {
		if got := c.s.Covers(c.o); got != c.want {
			t.Errorf("%+v covers %+v: %v, want %v", c.s, c.o, got, c.want)
		}
	}
}

// A read holds a position for a scope it covers from its start on, while
// it reads or has read past it, and never once it failed.
func TestSharedHolds(t *testing.T) {
	key := func(obj runtime.Object) (string, error) {
		a, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		return "/widgets/" + a.GetNamespace() + "/" + a.GetName(), nil
	}
	cache, err := watchcache.New(watchcache.Config{KeyFunc: key, GetAttrs: widget.GetAttrs, Versioner: storage.APIObjectVersioner{}})
	if err != nil {
		t.Fatal(err)
	}
	ns := Scope{Key: "/widgets/ns/", Recursive: true}
	g := NewShared(cache, 10, ns)
	if !g.Holds(12, ns) || g.Holds(9, ns) || g.Holds(12, Scope{Key: "/widgets/", Recursive: true}) {
		t.Fatal("a read still listing: holds its scope from its start on, nothing else")
	}
	if err := cache.Replace(nil, 10); err != nil {
		t.Fatal(err)
	}
	cache.UpdateRV(20)
	if !g.Holds(25, Scope{Key: "/widgets/ns/a"}) {
		t.Fatal("a reading read does not hold a position it will reach")
	}
	g.End(nil)
	if !g.Holds(19, ns) || g.Holds(20, ns) {
		t.Fatal("an ended read holds exactly the positions before what it read")
	}
	f := NewShared(cache, 10, ns)
	f.End(errors.New("compacted"))
	if f.Holds(12, ns) || f.Err() == nil || f.Reading() {
		t.Fatal("a failed read holds a position")
	}
}
