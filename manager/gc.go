package manager

import (
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/gc"
)

// addGarbageCollector adds, when Options.GarbageCollector asked for it, a
// gc.Collector over the kinds the manager serves (every kind of its
// Kinds, or with Options.Storage and no Etcd the given ones) as a
// leader-only Runnable. Run calls it before starting anything.
func (m *Manager) addGarbageCollector() error {
	m.mu.Lock()
	started := m.state != stateNew
	m.mu.Unlock()
	if !m.gc || started {
		return nil // a second Run fails in begin
	}
	kinds := m.kinds.All()
	if lb, ok := m.backend.(*localBackend); ok && lb.etcd == nil {
		var given []client.Kind
		for _, k := range kinds {
			if _, ok := lb.given[k.GroupVersionKind]; ok {
				given = append(given, k)
			}
		}
		kinds = given
	}
	if m.client == nil {
		return ErrNoBackend
	}
	g, err := gc.New(gc.Config{Client: m.client, Cache: m.cache, Kinds: kinds, Logger: m.log, Registerer: m.registerer})
	if err != nil {
		return err
	}
	return m.Add(g)
}
