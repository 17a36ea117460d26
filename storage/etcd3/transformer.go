package etcd3

import (
	"maps"
	"slices"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

var _ storage.TransformerObserver = (*Store)(nil)

// transformerRef holds the store's current transformer (an atomic pointer
// to it keeps reads lock-free).
type transformerRef struct{ t value.Transformer }

// currentTransformer returns the transformer values are read and written with.
func (s *Store) currentTransformer() value.Transformer { return s.transformer.Load().t }

// SetTransformer replaces the transformer values are read and written with,
// for the writes and reads that start after it returns, and then calls the
// functions registered with OnTransformerChange (a cacher over the store
// revalidates its content). A transformer that reloads its keys by itself
// announces a reload by passing itself. nil means value.Identity.
func (s *Store) SetTransformer(t value.Transformer) {
	if t == nil {
		t = value.Identity
	}
	s.transformer.Store(&transformerRef{t})
	s.observersMu.Lock()
	observers := slices.Collect(maps.Values(s.observers))
	s.observersMu.Unlock()
	s.logger.Info("etcd3: value transformer replaced", "resourcePrefix", s.resourcePrefix, "observers", len(observers))
	for _, fn := range observers {
		fn()
	}
}

// OnTransformerChange implements storage.TransformerObserver.
func (s *Store) OnTransformerChange(fn func()) (unregister func()) {
	s.observersMu.Lock()
	defer s.observersMu.Unlock()
	if s.observers == nil {
		s.observers = make(map[int]func())
	}
	id := s.nextObserver
	s.nextObserver++
	s.observers[id] = fn
	return func() {
		s.observersMu.Lock()
		defer s.observersMu.Unlock()
		delete(s.observers, id)
	}
}
