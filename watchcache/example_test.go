package watchcache_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/watchcache"
)

func Example() {
	keyOf := func(obj runtime.Object) (string, error) {
		a, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		return "/widgets/" + a.GetNamespace() + "/" + a.GetName(), nil
	}
	c, _ := watchcache.New(watchcache.Config{KeyFunc: keyOf})
	_ = c.Replace([]runtime.Object{testapi.Make("ns", "a", nil)}, 10)
	_, _ = c.Apply(watch.Added, testapi.Make("ns", "b", nil), 11)
	c.UpdateRV(11) // a progress notification: revision 11 is complete

	evs, rv, _ := c.EventsSince(10, 0)
	fmt.Println(len(evs), evs[0].Type, evs[0].Key(), rv)

	old, _ := c.List(10, watchcache.Exact, watchcache.ListOptions{Key: "/widgets/", Recursive: true})
	now, _ := c.List(0, watchcache.NotOlderThan, watchcache.ListOptions{Key: "/widgets/", Recursive: true})
	fmt.Println(len(old.Items), len(now.Items))
	// Output:
	// 1 ADDED /widgets/ns/b 11
	// 1 2
}
