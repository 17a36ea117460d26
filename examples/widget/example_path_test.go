package widget_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// The whole path in one function: an embedded etcd, a Widget store on it,
// a cacher serving reads and watches from memory, and a typed informer
// over the cacher that sees a write made through the cacher.
func Example_storeCacherInformer() {
	etcd, err := embedtest.StartServer(embedtest.Options{}) // one member, data in a temp dir
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec,
		NewFunc: widget.New, NewListFunc: widget.NewList, ResourcePrefix: widget.KeyRoot})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup // every goroutine started below; stopped before the store and etcd
	defer func() { cancel(); running.Wait() }()

	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: widget.KeyRoot,
		NewFunc: widget.New, NewListFunc: widget.NewList, KeyFunc: widget.KeyOf, GetAttrs: widget.GetAttrs})
	if err != nil {
		panic(err)
	}
	running.Go(func() { _ = c.Run(ctx) })
	if err := c.WaitReady(ctx); err != nil {
		panic(err)
	}

	lw := reflector.NewStorageListerWatcher(c, widget.KeyRoot, widget.NewList, "") // all namespaces
	inf, err := reflector.NewSharedIndexInformer[*widget.Widget](lw)
	if err != nil {
		panic(err)
	}
	added := make(chan *widget.Widget, 1)
	_, _ = inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*widget.Widget]{
		AddFunc: func(w *widget.Widget, initial bool) { added <- w },
	})
	running.Go(func() { _ = inf.Run(ctx) })
	reflector.WaitForCacheSync(ctx, inf.HasSynced)

	w := widget.NewWidget("default", "w1")
	w.Spec.Replicas = 3
	if err := c.Create(ctx, widget.Key("default", "w1"), w, &widget.Widget{}, 0); err != nil {
		panic(err)
	}
	got := <-added
	fmt.Println("informer saw", got.Namespace+"/"+got.Name, "replicas", got.Spec.Replicas)
	// Output: informer saw default/w1 replicas 3
}
