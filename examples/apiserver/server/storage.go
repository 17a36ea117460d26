package server

import (
	"fmt"
	"log/slog"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	widgetsv1 "github.com/listwatch/listwatch/examples/apiserver/apis/widgets/v1"
	"github.com/listwatch/listwatch/k8scompat"
)

// Storage names the storage behind the registry.
type Storage string

// The storages the server can run on.
const (
	// StorageListwatch is listwatch's etcd store and cacher, through
	// k8scompat.StorageDecorator (the default).
	StorageListwatch Storage = "listwatch"
	// StorageKubernetes is Kubernetes' own etcd3 store and watch cache
	// (registry.StorageWithCacher), for comparison.
	StorageKubernetes Storage = "kubernetes"
)

// storagePrefix is the etcd prefix widgets are stored below.
const storagePrefix = "/registry"

// restOptionsGetter gives every resource the same storage config and
// decorator.
type restOptionsGetter struct {
	config    *storagebackend.Config
	decorator generic.StorageDecorator
}

// GetRESTOptions implements generic.RESTOptionsGetter.
func (g restOptionsGetter) GetRESTOptions(resource schema.GroupResource, _ runtime.Object) (generic.RESTOptions, error) {
	return generic.RESTOptions{
		StorageConfig:           g.config.ForResource(resource),
		Decorator:               g.decorator,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          "/" + resource.Group + "/" + resource.Resource,
		CountMetricPollPeriod:   time.Minute,
	}, nil
}

// newRESTOptionsGetter returns the options getter for storage kind on
// etcd at endpoints (cli connected to them).
func newRESTOptionsGetter(kind Storage, cli *clientv3.Client, endpoints []string, log *slog.Logger) (generic.RESTOptionsGetter, error) {
	cfg := storagebackend.NewDefaultConfig(storagePrefix, Codecs.LegacyCodec(widgetsv1.SchemeGroupVersion))
	cfg.Transport.ServerList = endpoints
	switch kind {
	case StorageListwatch, "":
		return restOptionsGetter{config: cfg, decorator: k8scompat.StorageDecorator(k8scompat.DecoratorConfig{
			Client: cli,
			Logger: log,
		})}, nil
	case StorageKubernetes:
		return restOptionsGetter{config: cfg, decorator: genericregistry.StorageWithCacher()}, nil
	}
	return nil, fmt.Errorf("unknown storage %q (want %q or %q)", kind, StorageListwatch, StorageKubernetes)
}
