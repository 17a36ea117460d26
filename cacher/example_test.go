package cacher_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Example serves Widgets from a cacher over an etcd3 store: writes go to
// etcd, the watch is served from memory.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: testapi.Codec, NewFunc: testapi.NewWidget,
		NewListFunc: testapi.NewWidgetList, Prefix: fmt.Sprintf("/example-%d", time.Now().UnixNano()), ResourcePrefix: "/widgets"})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets",
		NewFunc: testapi.NewWidget, NewListFunc: testapi.NewWidgetList})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitReady(ctx); err != nil {
		panic(err)
	}
	w, err := c.Watch(ctx, "/widgets/demo", storage.ListOptions{Recursive: true})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	out := &testapi.Widget{}
	if err := c.Create(ctx, "/widgets/demo/w1", testapi.Make("demo", "w1", nil), out, 0); err != nil {
		panic(err)
	}
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.(*testapi.Widget).Name)
	// Output: ADDED w1
}
