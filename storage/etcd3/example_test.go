package etcd3_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Example stores Widgets in an embedded etcd: create, list, and the typed
// error of a second create.
func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	store, err := etcd3.New(etcd3.Config{
		Client:         srv.Client,
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		NewListFunc:    widget.NewList,
		Prefix:         "/registry",
		ResourcePrefix: widget.KeyRoot,
	})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()

	created := &widget.Widget{}
	if err := store.Create(ctx, widget.Key("default", "w1"), widget.NewWidget("default", "w1"), created, 0); err != nil {
		panic(err)
	}
	list := &widget.WidgetList{}
	err = store.GetList(ctx, widget.NamespaceKey("default"), storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(list.Items), list.Items[0].Name, list.Items[0].ResourceVersion == created.ResourceVersion)

	err = store.Create(ctx, widget.Key("default", "w1"), widget.NewWidget("default", "w1"), nil, 0)
	fmt.Println(storage.IsCode(err, storage.CodeKeyExists))
	// Output:
	// 1 w1 true
	// true
}
