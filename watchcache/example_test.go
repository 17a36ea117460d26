package watchcache_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/watchcache"
)

// Example fills a watch cache by hand (a cacher does it from etcd's watch)
// and reads events and lists at past and current revisions.
func Example() {
	c, err := watchcache.New(watchcache.Config{KeyFunc: widget.KeyOf})
	if err != nil {
		panic(err)
	}
	_ = c.Replace([]runtime.Object{widget.NewWidget("ns", "a")}, 10)
	_, _ = c.Apply(watch.Added, widget.NewWidget("ns", "b"), 11)
	c.UpdateRV(11) // a progress notification: revision 11 is complete

	evs, rv, _ := c.EventsSince(10, 0)
	fmt.Println(len(evs), evs[0].Type, evs[0].Key(), rv)

	all := watchcache.ListOptions{Key: widget.KeyRoot + "/", Recursive: true}
	old, _ := c.List(10, watchcache.Exact, all)
	now, _ := c.List(0, watchcache.NotOlderThan, all)
	fmt.Println(len(old.Items), len(now.Items))
	// Output:
	// 1 ADDED /widgets/ns/b 11
	// 1 2
}
