package registry_test

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Typed writes with Kubernetes' metadata, in process: a registry over an
// etcd3 store of Widgets (a cacher works the same way).
func Example() {
	etcd, err := embedtest.StartServer(embedtest.Options{})
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
	reg, err := registry.New(registry.Config{Storage: store, Resource: widget.Resource.GroupResource(), Kind: widget.Kind})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	key := widget.Key("default", "w1")

	w := widget.NewWidget("default", "w1")
	w.Finalizers = []string{"example.com/cleanup"}
	out := &widget.Widget{}
	if err := reg.Create(ctx, key, w, out, registry.CreateOptions{}); err != nil {
		panic(err)
	}
	fmt.Println("created: uid set", out.UID != "", "generation", out.Generation)

	setReplicas := func(cur runtime.Object) (runtime.Object, error) {
		cur.(*widget.Widget).Spec.Replicas = 3
		return cur, nil
	}
	if _, err := reg.Update(ctx, key, out, registry.UpdateOptions{}, setReplicas); err != nil {
		panic(err)
	}
	fmt.Println("spec changed: generation", out.Generation)

	deleted, err := reg.Delete(ctx, key, out, registry.DeleteOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("deleted", deleted, "being deleted", out.DeletionTimestamp != nil)

	res, err := reg.Update(ctx, key, out, registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*widget.Widget).Finalizers = nil
		return cur, nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("last finalizer removed: deleted", res.Deleted)
	// Output:
	// created: uid set true generation 1
	// spec changed: generation 2
	// deleted false being deleted true
	// last finalizer removed: deleted true
}
