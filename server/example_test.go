package server_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Serve widgets from an etcd3 store on 127.0.0.1:8080 until SIGINT. (In
// production put a cacher between the store and the server.)
func Example() {
	etcd, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer etcd.Close()
	// The server handles objects as unstructured JSON.
	store, err := etcd3.New(etcd3.Config{
		Client: etcd.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		ResourcePrefix: widget.KeyRoot,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	srv, err := server.New(server.Config{Resources: []server.Resource{{
		Group: widget.GroupVersion.Group, Version: widget.GroupVersion.Version, Plural: widget.Resource.Resource,
		Kind: widget.Kind, Namespaced: true, Storage: store, KeyRoot: widget.KeyRoot,
		GetAttrs: widget.GetAttrs, SelectableFields: widget.SelectableFields,
	}}})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// curl -N 'http://127.0.0.1:8080/apis/demo.listwatch.dev/v1/namespaces/default/widgets?watch=true'
	if err := srv.ListenAndServe(ctx, "127.0.0.1:8080"); err != nil {
		log.Fatal(err)
	}
}
