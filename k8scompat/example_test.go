package k8scompat_test

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/k8scompat"
	lwstorage "github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// listwatchDecorator is the StorageDecorator of the package documentation:
// a generic registry configured with it keeps its objects in listwatch's etcd
// store and serves reads and watches from listwatch's cacher.
func listwatchDecorator(cli *clientv3.Client) generic.StorageDecorator {
	return func(cfg *storagebackend.ConfigForResource, resourcePrefix string,
		keyFunc func(runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
		getAttrs storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers,
	) (storage.Interface, factory.DestroyFunc, error) {
		store, err := etcd3.New(etcd3.Config{
			Client:         cli,
			Codec:          cfg.Codec,
			NewFunc:        newFunc,
			NewListFunc:    newListFunc,
			Prefix:         cfg.Prefix,
			ResourcePrefix: resourcePrefix,
			Transformer:    k8scompat.Transformer(cfg.Transformer),
		})
		if err != nil {
			return nil, nil, err
		}
		c, err := cacher.New(cacher.Config{
			Storage: store, ResourcePrefix: resourcePrefix, KeyFunc: keyFunc,
			NewFunc: newFunc, NewListFunc: newListFunc,
			GetAttrs: lwstorage.AttrFunc(getAttrs),
		})
		if err != nil {
			return nil, nil, err
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(ctx) }()
		s, err := k8scompat.New(k8scompat.Config{Storage: c})
		if err != nil {
			cancel()
			return nil, nil, err
		}
		return s, func() { cancel(); <-done; store.Close() }, nil
	}
}

// Example shows where the decorator goes: RESTOptions.Decorator of the
// generic registry (compile-only; it needs a running etcd).
func Example() {
	var cli *clientv3.Client // connected to etcd
	opts := generic.RESTOptions{Decorator: listwatchDecorator(cli)}
	_ = opts
}
