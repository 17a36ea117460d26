package watchcache

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
)

// Defaults for zero-valued Config fields.
const (
	DefaultWindow       = 2 * time.Minute
	DefaultMinCapacity  = 128
	DefaultMaxCapacity  = 100_000
	DefaultMaxSnapshots = 1024
)

// KeyFunc returns the storage key of an object.
type KeyFunc func(obj runtime.Object) (string, error)

// Config configures a Cache.
type Config struct {
	// KeyFunc maps an object to its key. Required.
	KeyFunc KeyFunc
	// GetAttrs extracts label and field sets; nil means storage.DefaultAttrs.
	GetAttrs storage.AttrFunc
	// Versioner reads object RVs; nil means storage.APIObjectVersioner.
	Versioner storage.Versioner
	// IndexLabels are label names with a secondary index (LabelIndex(name)).
	IndexLabels []string
	// IndexFields are field names with a secondary index (FieldIndex(name)).
	IndexFields []string
	// Window is the span of history the event buffer tries to keep: it grows
	// while its oldest event is younger than Window. 0 means DefaultWindow.
	Window time.Duration
	// MinCapacity and MaxCapacity bound the event buffer; 0 means
	// DefaultMinCapacity / DefaultMaxCapacity.
	MinCapacity, MaxCapacity int
	// MaxSnapshots bounds the number of past-RV state snapshots kept for
	// exact-RV lists and pagination; 0 means DefaultMaxSnapshots. When
	// full, the oldest is dropped, unless SpacedSnapshots is set.
	MaxSnapshots int
	// SpacedSnapshots, when MaxSnapshots are kept, thins out the older
	// snapshots instead of dropping the oldest (the newest quarter stays one
	// per revision), so that they span the event buffer's whole history;
	// RVs between two are rebuilt by replaying the buffer's events (about
	// 5 µs an event). Exact lists and continue pages at any RV the buffer
	// covers are then served from memory instead of the storage, at the
	// price of the tree nodes the spaced snapshots keep apart: about
	// 1.2 KB per event they span (10,000 objects after 100,000 updates:
	// 127 MB of snapshots against 5 MB, BenchmarkSnapshotsAfterUpdates).
	SpacedSnapshots bool
	// Codec, when set, makes the cache keep each object's encoding rather
	// than the decoded object: about the encoded size per object instead
	// of the decoded size (typically 1.5-3x it), for a decoding on every
	// read of an object nothing else references any more. Element.Encoded
	// hands the encoding to callers that can use it as it is (such as an
	// HTTP server of the same format). nil keeps decoded objects.
	Codec Codec
	// NoPacking turns off the cache's memory packing (package
	// watchcache/internal/pack, whose doc gives each trick's measured
	// gain). By default a cache without a Codec rewrites each decoded
	// object it is given, once, so that strings and label maps equal
	// across objects are shared (objects given to the cache must then not
	// be read by anyone else until Apply or Replace returns); a cache
	// with one shares equal label sets, lays out an element's encoding,
	// key and field values in one allocation when that is smaller, and
	// lets readers share a decoded object through a weak pointer. With
	// NoPacking objects are kept as given, and an encoded element decodes
	// on every read.
	NoPacking bool
	// Clock stamps events (for the window); nil means the real clock.
	Clock clock.PassiveClock
}

func (c Config) withDefaults() (Config, error) {
	if c.KeyFunc == nil {
		return c, fmt.Errorf("watchcache: Config.KeyFunc is required")
	}
	if c.GetAttrs == nil {
		c.GetAttrs = storage.DefaultAttrs
	}
	if c.Versioner == nil {
		c.Versioner = storage.APIObjectVersioner{}
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MinCapacity <= 0 {
		c.MinCapacity = DefaultMinCapacity
	}
	if c.MaxCapacity <= 0 {
		c.MaxCapacity = DefaultMaxCapacity
	}
	if c.MaxCapacity < c.MinCapacity {
		return c, fmt.Errorf("watchcache: MaxCapacity %d < MinCapacity %d", c.MaxCapacity, c.MinCapacity)
	}
	if c.MaxSnapshots <= 0 {
		c.MaxSnapshots = DefaultMaxSnapshots
	}
	if c.Clock == nil {
		c.Clock = clock.RealClock{}
	}
	return c, nil
}
