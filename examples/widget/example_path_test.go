package widget_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// The whole path in one function: an embedded etcd, a Widget store on it,
// a cacher serving reads and watches from memory, a registry giving
// writes Kubernetes' metadata, and a typed informer over the cacher that
// sees a write made through them.
func Example_storeCacherInformer() {
	// One member, data in a temporary directory, ports chosen by the kernel.
	etcd, err := etcdrun.StartServer(etcdrun.ServerConfig{
		ClientURLs: []string{"http://127.0.0.1:0"}, PeerURLs: []string{"http://127.0.0.1:0"}})
	if err != nil {
		panic(err)
	}
	defer etcd.Close()
	client, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: etcd.Endpoints})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	store, err := etcd3.New(etcd3.Config{Client: client, Codec: widget.Codec,
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
	// Informers come from a factory: one per resource.
	factory := reflector.NewInformerFactory()
	inf, err := reflector.InformerFor[*widget.Widget](factory, widget.Resource, lw)
	if err != nil {
		panic(err)
	}
	added := make(chan *widget.Widget, 1)
	_, _ = inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*widget.Widget]{
		AddFunc: func(w *widget.Widget, initial bool) { added <- w },
	})
	factory.Start(ctx)
	defer factory.Shutdown()
	reflector.WaitForCacheSync(ctx, inf.HasSynced)

	w := widget.NewWidget("default", "w1")
	w.Spec.Replicas = 3
	// Writes through a registry over the cacher get uid, creationTimestamp
	// and generation, as over HTTP.
	reg, err := registry.New(registry.Config{Storage: c, Resource: widget.Resource.GroupResource(), Kind: widget.Kind})
	if err != nil {
		panic(err)
	}
	if err := reg.Create(ctx, widget.Key("default", "w1"), w, &widget.Widget{}, registry.CreateOptions{}); err != nil {
		panic(err)
	}
	got := <-added
	fmt.Println("informer saw", got.Namespace+"/"+got.Name, "replicas", got.Spec.Replicas,
		"generation", got.Generation, "uid set", got.UID != "")
	// Output: informer saw default/w1 replicas 3 generation 1 uid set true
}
