package k8scompat_test

import (
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/listwatch/listwatch/k8scompat"
)

// Example shows where the decorator goes: RESTOptions.Decorator of the
// generic registry (compile-only; it needs a running etcd). The registry's
// storage config supplies the codec, the etcd prefix and the transformer
// (encryption at rest), as for Kubernetes' own storage.
func Example() {
	var cli *clientv3.Client                 // connected to etcd
	var storageConfig *storagebackend.Config // from the server's etcd options
	gr := schema.GroupResource{Group: "example.listwatch.dev", Resource: "widgets"}
	opts := generic.RESTOptions{
		StorageConfig:  storageConfig.ForResource(gr),
		Decorator:      k8scompat.StorageDecorator(k8scompat.DecoratorConfig{Client: cli}),
		ResourcePrefix: "/" + gr.Group + "/" + gr.Resource,
	}
	_ = opts
}
