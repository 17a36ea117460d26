package cacher_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Example serves Widgets from a cacher over an etcd3 store on an embedded
// etcd: writes go to etcd, the watch is served from memory.
func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: widget.Codec,
		NewFunc: widget.New, NewListFunc: widget.NewList, ResourcePrefix: widget.KeyRoot})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: widget.KeyRoot,
		NewFunc: widget.New, NewListFunc: widget.NewList, KeyFunc: widget.KeyOf, GetAttrs: widget.GetAttrs})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := c.WaitReady(ctx); err != nil {
		panic(err)
	}

	w, err := c.Watch(ctx, widget.NamespaceKey("demo"), storage.ListOptions{Recursive: true})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	if err := c.Create(ctx, widget.Key("demo", "w1"), widget.NewWidget("demo", "w1"), &widget.Widget{}, 0); err != nil {
		panic(err)
	}
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.Object.(*widget.Widget).Name)
	// Output: ADDED w1
}
