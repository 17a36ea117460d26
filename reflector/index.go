package reflector

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/util/sets"
)

// IndexFunc computes the index values of an object; an object may have
// several values (or none) in one index.
type IndexFunc[T any] func(obj T) ([]string, error)

// Indexers names index functions.
type Indexers[T any] map[string]IndexFunc[T]

// NamespaceIndex is the name of the index every Indexer built by NewIndexer
// has: objects by namespace.
const NamespaceIndex = "namespace"

// MetaNamespaceIndexFunc indexes an object by its namespace.
func MetaNamespaceIndexFunc[T Object](obj T) ([]string, error) {
	if isNil(obj) {
		return nil, ErrNilObject
	}
	return []string{obj.GetNamespace()}, nil
}

// ErrIndexNotFound is returned (wrapped, with the name) for a query on an
// index that does not exist.
var ErrIndexNotFound = errors.New("reflector: index does not exist")

// ErrIndexExists is returned (wrapped, with the name) by AddIndexers for a
// name that is already indexed.
var ErrIndexExists = errors.New("reflector: index already exists")

// index maps an index value to the keys of the objects with that value.
type index map[string]sets.Set[string]

func (ix index) add(value, key string) {
	s := ix[value]
	if s == nil {
		s = sets.New[string]()
		ix[value] = s
	}
	s.Insert(key)
}

func (ix index) remove(value, key string) {
	s := ix[value]
	if s == nil {
		return
	}
	s.Delete(key)
	if s.Len() == 0 {
		delete(ix, value) // keep memory bounded by live values
	}
}

func indexNotFound(name string) error { return fmt.Errorf("%w: %q", ErrIndexNotFound, name) }
