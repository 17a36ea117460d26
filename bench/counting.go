package bench

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Counting is a storage.Interface that counts the calls reaching the
// storage it wraps: put it between a cacher and the etcd3 store to see
// which requests the cacher does not serve from memory.
type Counting struct {
	storage.Interface

	reads   atomic.Int64 // Get, GetList, Stats, GetCurrentResourceVersion
	watches atomic.Int64 // Watch
	writes  atomic.Int64 // Create, Delete, GuaranteedUpdate
	other   atomic.Int64 // RequestWatchProgress
}

// NewCounting wraps s.
func NewCounting(s storage.Interface) *Counting { return &Counting{Interface: s} }

// Counts is a snapshot of the counters of a Counting.
type Counts struct {
	// Reads counts Get, GetList, Stats and GetCurrentResourceVersion.
	Reads int64
	// Watches counts Watch.
	Watches int64
	// Writes counts Create, Delete and GuaranteedUpdate.
	Writes int64
	// Progress counts RequestWatchProgress.
	Progress int64
}

// Counts returns the counters.
func (c *Counting) Counts() Counts {
	return Counts{Reads: c.reads.Load(), Watches: c.watches.Load(), Writes: c.writes.Load(), Progress: c.other.Load()}
}

// Sub returns the calls counted between o and c.
func (c Counts) Sub(o Counts) Counts {
	return Counts{Reads: c.Reads - o.Reads, Watches: c.Watches - o.Watches, Writes: c.Writes - o.Writes,
		Progress: c.Progress - o.Progress}
}

// Requests is the number of reads, watches and writes (progress requests,
// which carry no data, are left out).
func (c Counts) Requests() int64 { return c.Reads + c.Watches + c.Writes }

// Create implements storage.Interface.
func (c *Counting) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	c.writes.Add(1)
	return c.Interface.Create(ctx, key, obj, out, ttl)
}

// Delete implements storage.Interface.
func (c *Counting) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, cached runtime.Object, opts storage.DeleteOptions) error {
	c.writes.Add(1)
	return c.Interface.Delete(ctx, key, out, pre, validate, cached, opts)
}

// GuaranteedUpdate implements storage.Interface.
func (c *Counting) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, try storage.UpdateFunc, cached runtime.Object) error {
	c.writes.Add(1)
	return c.Interface.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, try, cached)
}

// Watch implements storage.Interface.
func (c *Counting) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	c.watches.Add(1)
	return c.Interface.Watch(ctx, key, opts)
}

// Get implements storage.Interface.
func (c *Counting) Get(ctx context.Context, key string, opts storage.GetOptions, obj runtime.Object) error {
	c.reads.Add(1)
	return c.Interface.Get(ctx, key, opts, obj)
}

// GetList implements storage.Interface.
func (c *Counting) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	c.reads.Add(1)
	return c.Interface.GetList(ctx, key, opts, list)
}

// Stats implements storage.Interface.
func (c *Counting) Stats(ctx context.Context) (storage.Stats, error) {
	c.reads.Add(1)
	return c.Interface.Stats(ctx)
}

// GetCurrentResourceVersion implements storage.Interface.
func (c *Counting) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	c.reads.Add(1)
	return c.Interface.GetCurrentResourceVersion(ctx)
}

// RequestWatchProgress implements storage.Interface.
func (c *Counting) RequestWatchProgress(ctx context.Context) error {
	c.other.Add(1)
	return c.Interface.RequestWatchProgress(ctx)
}
