package server_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
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
	store, err := etcd3.New(etcd3.Config{
		Client: etcd.Client, Codec: testapi.UnstructuredCodec,
		NewFunc: testapi.NewUnstructured, NewListFunc: testapi.NewUnstructuredList,
		ResourcePrefix: "/widgets",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	srv, err := server.New(server.Config{Resources: []server.Resource{{
		Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget",
		Namespaced: true, Storage: store, KeyRoot: "/widgets",
		GetAttrs: testapi.GetAttrs, SelectableFields: []string{"spec.nodeName"},
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
