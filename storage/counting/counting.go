// Package counting wraps a storage.Interface and counts the calls that reach
// it, per method. Put it between a cacher and the etcd3 store to see which
// requests the cacher did not serve from memory (benchmarks, tests and the
// demo do exactly that). It is safe for concurrent use.
package counting

import (
	"context"
	"errors"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Storage counts the calls made to the storage.Interface it embeds.
type Storage struct {
	storage.Interface

	gets, lists, stats, currentRVs, watches, creates, updates, deletes, progress atomic.Int64
}

// New wraps s.
func New(s storage.Interface) *Storage { return &Storage{Interface: s} }

// Counts is a snapshot of the counters, one per method.
type Counts struct {
	// Gets, Lists, Stats and CurrentRVs count Get, GetList, Stats and GetCurrentResourceVersion.
	Gets, Lists, Stats, CurrentRVs int64
	// Watches counts Watch.
	Watches int64
	// Creates, Updates and Deletes count Create, GuaranteedUpdate and Delete.
	Creates, Updates, Deletes int64
	// Progress counts RequestWatchProgress.
	Progress int64
}

// Counts returns the current counters.
func (s *Storage) Counts() Counts {
	return Counts{
		Gets: s.gets.Load(), Lists: s.lists.Load(), Stats: s.stats.Load(), CurrentRVs: s.currentRVs.Load(),
		Watches: s.watches.Load(),
		Creates: s.creates.Load(), Updates: s.updates.Load(), Deletes: s.deletes.Load(),
		Progress: s.progress.Load(),
	}
}

// Sub returns the calls counted between o and c.
func (c Counts) Sub(o Counts) Counts {
	return Counts{
		Gets: c.Gets - o.Gets, Lists: c.Lists - o.Lists, Stats: c.Stats - o.Stats, CurrentRVs: c.CurrentRVs - o.CurrentRVs,
		Watches: c.Watches - o.Watches,
		Creates: c.Creates - o.Creates, Updates: c.Updates - o.Updates, Deletes: c.Deletes - o.Deletes,
		Progress: c.Progress - o.Progress,
	}
}

// Reads is Gets + Lists + Stats + CurrentRVs.
func (c Counts) Reads() int64 { return c.Gets + c.Lists + c.Stats + c.CurrentRVs }

// Writes is Creates + Updates + Deletes.
func (c Counts) Writes() int64 { return c.Creates + c.Updates + c.Deletes }

// Requests is every call that carries data: reads, watches and writes
// (progress requests are left out).
func (c Counts) Requests() int64 { return c.Reads() + c.Watches + c.Writes() }

// Create implements storage.Interface.
func (s *Storage) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	s.creates.Add(1)
	return s.Interface.Create(ctx, key, obj, out, ttl)
}

// Delete implements storage.Interface.
func (s *Storage) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, cached runtime.Object, opts storage.DeleteOptions) error {
	s.deletes.Add(1)
	return s.Interface.Delete(ctx, key, out, pre, validate, cached, opts)
}

// GuaranteedUpdate implements storage.Interface.
func (s *Storage) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, try storage.UpdateFunc, cached runtime.Object, opts storage.UpdateOptions) error {
	s.updates.Add(1)
	return s.Interface.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, try, cached, opts)
}

// Watch implements storage.Interface.
func (s *Storage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	s.watches.Add(1)
	return s.Interface.Watch(ctx, key, opts)
}

// Get implements storage.Interface.
func (s *Storage) Get(ctx context.Context, key string, opts storage.GetOptions, obj runtime.Object) error {
	s.gets.Add(1)
	return s.Interface.Get(ctx, key, opts, obj)
}

// GetList implements storage.Interface.
func (s *Storage) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	s.lists.Add(1)
	return s.Interface.GetList(ctx, key, opts, list)
}

// Stats implements storage.Interface.
func (s *Storage) Stats(ctx context.Context) (storage.Stats, error) {
	s.stats.Add(1)
	return s.Interface.Stats(ctx)
}

// GetCurrentResourceVersion implements storage.Interface.
func (s *Storage) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	s.currentRVs.Add(1)
	return s.Interface.GetCurrentResourceVersion(ctx)
}

// RequestWatchProgress implements storage.Interface.
func (s *Storage) RequestWatchProgress(ctx context.Context) error {
	s.progress.Add(1)
	return s.Interface.RequestWatchProgress(ctx)
}

// RefreshCompactRevision implements storage.CompactRevisionRefresher when
// the wrapped storage does; otherwise it returns CompactRevision.
func (s *Storage) RefreshCompactRevision(ctx context.Context) (int64, error) {
	if r, ok := s.Interface.(storage.CompactRevisionRefresher); ok {
		return r.RefreshCompactRevision(ctx)
	}
	return s.Interface.CompactRevision(), nil
}

// KeyVersions implements storage.KeyVersionLister when the wrapped storage
// does; otherwise it returns errors.ErrUnsupported.
func (s *Storage) KeyVersions(ctx context.Context, prefix string, rev int64, fn func(storage.KeyVersion) error) error {
	if l, ok := s.Interface.(storage.KeyVersionLister); ok {
		return l.KeyVersions(ctx, prefix, rev, fn)
	}
	return errors.ErrUnsupported
}

// OnTransformerChange implements storage.TransformerObserver when the
// wrapped storage does; otherwise fn is never called.
func (s *Storage) OnTransformerChange(fn func()) (unregister func()) {
	if o, ok := s.Interface.(storage.TransformerObserver); ok {
		return o.OnTransformerChange(fn)
	}
	return func() {}
}
