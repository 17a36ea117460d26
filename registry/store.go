package registry

import (
	"errors"
	"fmt"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/storage"
)

// ErrNoStorage is returned by New for a Config without Storage.
var ErrNoStorage = errors.New("registry: Config.Storage is required")

// ErrNoObjectMeta is wrapped by the errors about objects that have no
// Kubernetes metadata (meta.Accessor refuses them) or outputs of another
// type than the object.
var ErrNoObjectMeta = errors.New("registry: object without Kubernetes metadata")

// Config configures a Store.
type Config struct {
	// Storage stores the objects. Required.
	Storage storage.Interface
	// Resource names the objects in errors, as in
	// `widgets.demo.listwatch.dev "w1"`; zero is allowed.
	Resource schema.GroupResource
	// Kind is the objects' kind in Invalid errors, such as "Widget".
	Kind string
	// Now is the clock of creationTimestamp and deletionTimestamp; nil
	// means time.Now.
	Now func() time.Time
}

// Store applies Kubernetes' metadata rules (see the package doc) to the
// writes it passes to its storage. It is safe for concurrent use.
type Store struct {
	cfg Config
}

// New returns a Store over cfg.Storage.
func New(cfg Config) (*Store, error) {
	if cfg.Storage == nil {
		return nil, ErrNoStorage
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Store{cfg: cfg}, nil
}

// Storage returns the storage the Store writes to; reads (Get, GetList,
// Watch) go to it directly.
func (s *Store) Storage() storage.Interface { return s.cfg.Storage }

// now is the current time as Kubernetes stores it: UTC, in seconds.
func (s *Store) now() metav1.Time {
	return metav1.NewTime(s.cfg.Now().UTC().Truncate(time.Second))
}

// accessor returns obj's metadata.
func accessor(obj runtime.Object) (metav1.Object, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %T: %v", ErrNoObjectMeta, obj, err)
	}
	return a, nil
}

// newLike returns a new zero object of obj's type.
func newLike(obj runtime.Object) (runtime.Object, error) {
	out, ok := storage.NewLike(obj)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not a pointer to an object", ErrNoObjectMeta, obj)
	}
	return out, nil
}

// copyInto sets *out to a deep copy of *src; both must be pointers to the
// same type.
func copyInto(out, src runtime.Object) error {
	if out == nil {
		return nil
	}
	if src == nil || !storage.SetObject(out, src.DeepCopyObject()) {
		return fmt.Errorf("%w: cannot copy %T into %T", ErrNoObjectMeta, src, out)
	}
	return nil
}

// content is obj as unstructured JSON (not copied for unstructured
// objects: read only).
func content(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return u.UnstructuredContent(), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("registry: converting %T to compare it: %w", obj, err)
	}
	return m, nil
}

// specChanged reports whether a and b differ anywhere but in metadata,
// status, apiVersion and kind: the changes that bump generation.
func specChanged(a, b runtime.Object) (bool, error) {
	am, err := content(a)
	if err != nil {
		return false, err
	}
	bm, err := content(b)
	if err != nil {
		return false, err
	}
	for k, v := range am {
		if !notSpec(k) && !reflect.DeepEqual(v, bm[k]) {
			return true, nil
		}
	}
	for k := range bm {
		if _, ok := am[k]; !ok && !notSpec(k) {
			return true, nil
		}
	}
	return false, nil
}

// notSpec reports whether the top-level field k is outside what
// generation counts.
func notSpec(k string) bool {
	return k == "metadata" || k == "status" || k == "apiVersion" || k == "kind"
}
