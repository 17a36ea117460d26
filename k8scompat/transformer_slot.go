package k8scompat

import (
	"errors"
	"sync/atomic"

	k8svalue "k8s.io/apiserver/pkg/storage/value"

	"github.com/listwatch/listwatch/storage/etcd3"
)

// errNoTransformer is returned by Store.SetTransformer for a Store that
// StorageDecorator did not build.
var errNoTransformer = errors.New("k8scompat: the transformer of a Store is known only when StorageDecorator built it")

// transformerSlot is the transformer of the etcd store behind a Store built
// by StorageDecorator, in Kubernetes' terms.
type transformerSlot struct {
	store *etcd3.Store
	gate  bool // AllowUnsafeMalformedObjectDeletion, as the store was built
	cur   atomic.Pointer[k8sTransformerRef]
}

type k8sTransformerRef struct{ t k8svalue.Transformer }

// Transformer returns the transformer the etcd store behind s reads and
// writes values with, in Kubernetes' terms (the storage config's, unless
// SetTransformer replaced it), or nil when StorageDecorator did not build s
// or no transformer is configured.
func (s *Store) Transformer() k8svalue.Transformer {
	if s.tr == nil {
		return nil
	}
	return s.tr.cur.Load().t
}

// SetTransformer replaces the transformer of the etcd store behind s (built
// by StorageDecorator) for the reads and writes that start after it returns,
// as assigning the transformer of Kubernetes' etcd3 store does, with
// Kubernetes' classification of its errors (see KubernetesTransformer). A
// cacher serving s is told, and revalidates what it holds. A transformer that swaps its keys
// in place needs no call. nil means no transformation.
func (s *Store) SetTransformer(t k8svalue.Transformer) error {
	if s.tr == nil {
		return errNoTransformer
	}
	s.tr.cur.Store(&k8sTransformerRef{t})
	s.tr.store.SetTransformer(KubernetesTransformer(t, s.tr.gate))
	return nil
}
