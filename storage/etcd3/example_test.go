package etcd3_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	store, err := etcd3.New(etcd3.Config{
		Client:         srv.Client,
		Codec:          testapi.Codec,
		NewFunc:        testapi.NewWidget,
		NewListFunc:    testapi.NewWidgetList,
		Prefix:         "/registry",
		ResourcePrefix: "/widgets",
	})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx := context.Background()

	created := &testapi.Widget{}
	if err := store.Create(ctx, "/widgets/default/w1", testapi.Make("default", "w1", nil), created, 0); err != nil {
		panic(err)
	}
	list := &testapi.WidgetList{}
	err = store.GetList(ctx, "/widgets/default", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(list.Items), list.Items[0].Name, list.Items[0].ResourceVersion == created.ResourceVersion)

	err = store.Create(ctx, "/widgets/default/w1", testapi.Make("default", "w1", nil), nil, 0)
	fmt.Println(storage.IsCode(err, storage.CodeKeyExists))
	// Output:
	// 1 w1 true
	// true
}
