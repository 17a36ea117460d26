package reflector

import (
	"fmt"
	"sync"
)

// Store is a thread-safe keyed collection of objects. Objects handed out
// are shared: callers must not modify them.
type Store[T any] interface {
	// Add inserts or replaces obj.
	Add(obj T) error
	// Update inserts or replaces obj.
	Update(obj T) error
	// Delete removes obj's key.
	Delete(obj T) error
	// List returns every object, in no particular order.
	List() []T
	// ListKeys returns every key, in no particular order.
	ListKeys() []string
	// Get returns the stored object with obj's key.
	Get(obj T) (item T, exists bool, err error)
	// GetByKey returns the object stored under key.
	GetByKey(key string) (item T, exists bool)
	// Replace swaps the whole content for list; rv is the list's resource
	// version.
	Replace(list []T, rv string) error
	// Resync is a no-op for plain stores (DeltaFIFO implements it).
	Resync() error
}

// Indexer is a Store with named secondary indexes.
type Indexer[T any] interface {
	Store[T]
	// Index returns the objects that share an index value with obj in the
	// named index.
	Index(indexName string, obj T) ([]T, error)
	// IndexKeys returns the keys of the objects with value in the named index.
	IndexKeys(indexName, value string) ([]string, error)
	// ListIndexFuncValues returns every value present in the named index.
	ListIndexFuncValues(indexName string) []string
	// ByIndex returns the objects with value in the named index.
	ByIndex(indexName, value string) ([]T, error)
	// GetIndexers returns a copy of the index functions.
	GetIndexers() Indexers[T]
	// AddIndexers adds index functions and indexes the objects already
	// stored. It is allowed at any time.
	AddIndexers(newIndexers Indexers[T]) error
}

// cache is the Indexer implementation: one RWMutex over a map and its indexes.
type cache[T any] struct {
	keyFunc KeyFunc[T]

	mu       sync.RWMutex
	items    map[string]T
	indexers Indexers[T]
	indices  map[string]index
}

// NewStore returns a thread-safe Store without indexes. A nil keyFunc
// means MetaNamespaceKeyFunc.
func NewStore[T Object](keyFunc KeyFunc[T]) Store[T] {
	return newCache(keyFunc, nil)
}

// NewIndexer returns a thread-safe Indexer with the given indexes plus
// NamespaceIndex. A nil keyFunc means MetaNamespaceKeyFunc.
func NewIndexer[T Object](keyFunc KeyFunc[T], indexers Indexers[T]) Indexer[T] {
	all := Indexers[T]{NamespaceIndex: MetaNamespaceIndexFunc[T]}
	for name, f := range indexers {
		all[name] = f
	}
	return newCache(keyFunc, all)
}

func newCache[T Object](keyFunc KeyFunc[T], indexers Indexers[T]) *cache[T] {
	if keyFunc == nil {
		keyFunc = MetaNamespaceKeyFunc[T]
	}
	c := &cache[T]{keyFunc: keyFunc, items: map[string]T{}, indexers: Indexers[T]{}, indices: map[string]index{}}
	for name, f := range indexers {
		c.indexers[name] = f
		c.indices[name] = index{}
	}
	return c
}

// Add implements Store.
func (c *cache[T]) Add(obj T) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.putLocked(key, obj)
}

// Update implements Store.
func (c *cache[T]) Update(obj T) error { return c.Add(obj) }

// Delete implements Store.
func (c *cache[T]) Delete(obj T) error {
	key, err := c.keyFunc(obj)
	if err != nil {
		return err
	}
	c.deleteKey(key)
	return nil
}

func (c *cache[T]) deleteKey(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old, ok := c.items[key]
	if !ok {
		return
	}
	c.unindexLocked(key, old)
	delete(c.items, key)
}

// putLocked stores obj under key and updates the indexes. When an index
// function fails nothing is changed.
func (c *cache[T]) putLocked(key string, obj T) error {
	newValues, err := c.indexValues(obj)
	if err != nil {
		return fmt.Errorf("indexing %q: %w", key, err)
	}
	if old, ok := c.items[key]; ok {
		c.unindexLocked(key, old)
	}
	c.items[key] = obj
	for name, values := range newValues {
		ix := c.indices[name]
		for _, v := range values {
			ix.add(v, key)
		}
	}
	return nil
}

func (c *cache[T]) indexValues(obj T) (map[string][]string, error) {
	if len(c.indexers) == 0 {
		return nil, nil
	}
	out := make(map[string][]string, len(c.indexers))
	for name, f := range c.indexers {
		values, err := f(obj)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", name, err)
		}
		out[name] = values
	}
	return out, nil
}

// unindexLocked removes key's entries computed from old. Index functions
// are deterministic, so recomputing finds exactly what was added.
func (c *cache[T]) unindexLocked(key string, old T) {
	for name, f := range c.indexers {
		values, err := f(old)
		if err != nil {
			continue // it was never indexed: putLocked refuses such objects
		}
		ix := c.indices[name]
		for _, v := range values {
			ix.remove(v, key)
		}
	}
}

// List implements Store.
func (c *cache[T]) List() []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]T, 0, len(c.items))
	for _, o := range c.items {
		out = append(out, o)
	}
	return out
}

// ListKeys implements Store.
func (c *cache[T]) ListKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.items))
	for k := range c.items {
		out = append(out, k)
	}
	return out
}

// Get implements Store.
func (c *cache[T]) Get(obj T) (T, bool, error) {
	key, err := c.keyFunc(obj)
	if err != nil {
		var zero T
		return zero, false, err
	}
	o, ok := c.GetByKey(key)
	return o, ok, nil
}

// GetByKey implements Store.
func (c *cache[T]) GetByKey(key string) (T, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	o, ok := c.items[key]
	return o, ok
}

// Replace implements Store: the new content is built aside and swapped in,
// so readers see either the old or the new state.
func (c *cache[T]) Replace(list []T, _ string) error {
	items := make(map[string]T, len(list))
	for _, o := range list {
		key, err := c.keyFunc(o)
		if err != nil {
			return err
		}
		items[key] = o
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	indices, err := c.buildIndices(c.indexers, items)
	if err != nil {
		return err
	}
	c.items = items
	for name, ix := range indices {
		c.indices[name] = ix
	}
	return nil
}

func (c *cache[T]) buildIndices(indexers Indexers[T], items map[string]T) (map[string]index, error) {
	out := make(map[string]index, len(indexers))
	for name, f := range indexers {
		ix := index{}
		for key, o := range items {
			values, err := f(o)
			if err != nil {
				return nil, fmt.Errorf("indexing %q in %q: %w", key, name, err)
			}
			for _, v := range values {
				ix.add(v, key)
			}
		}
		out[name] = ix
	}
	return out, nil
}

// Resync implements Store; it does nothing.
func (c *cache[T]) Resync() error { return nil }

// Index implements Indexer.
func (c *cache[T]) Index(indexName string, obj T) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	f, ok := c.indexers[indexName]
	if !ok {
		return nil, indexNotFound(indexName)
	}
	values, err := f(obj)
	if err != nil {
		return nil, err
	}
	ix := c.indices[indexName]
	seen := map[string]struct{}{}
	var out []T
	for _, v := range values {
		for key := range ix[v] {
			if _, dup := seen[key]; dup {
				continue
			}
			seen[key] = struct{}{}
			out = append(out, c.items[key])
		}
	}
	return out, nil
}

// IndexKeys implements Indexer.
func (c *cache[T]) IndexKeys(indexName, value string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix, ok := c.indices[indexName]
	if !ok {
		return nil, indexNotFound(indexName)
	}
	return ix[value].UnsortedList(), nil
}

// ListIndexFuncValues implements Indexer; it returns nil for an unknown index.
func (c *cache[T]) ListIndexFuncValues(indexName string) []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix := c.indices[indexName]
	out := make([]string, 0, len(ix))
	for v := range ix {
		out = append(out, v)
	}
	return out
}

// ByIndex implements Indexer.
func (c *cache[T]) ByIndex(indexName, value string) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ix, ok := c.indices[indexName]
	if !ok {
		return nil, indexNotFound(indexName)
	}
	keys := ix[value]
	out := make([]T, 0, len(keys))
	for key := range keys {
		out = append(out, c.items[key])
	}
	return out, nil
}

// GetIndexers implements Indexer.
func (c *cache[T]) GetIndexers() Indexers[T] {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(Indexers[T], len(c.indexers))
	for k, v := range c.indexers {
		out[k] = v
	}
	return out
}

// AddIndexers implements Indexer. It fails, changing nothing, when a name
// exists already or an existing object cannot be indexed.
func (c *cache[T]) AddIndexers(newIndexers Indexers[T]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range newIndexers {
		if _, ok := c.indexers[name]; ok {
			return fmt.Errorf("%w: %q", ErrIndexExists, name)
		}
	}
	indices, err := c.buildIndices(newIndexers, c.items)
	if err != nil {
		return err
	}
	for name, f := range newIndexers {
		c.indexers[name] = f
		c.indices[name] = indices[name]
	}
	return nil
}
