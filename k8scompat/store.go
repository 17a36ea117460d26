package k8scompat

import (
	"context"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	utilflowcontrol "k8s.io/apiserver/pkg/util/flowcontrol"

	lwstorage "github.com/listwatch/listwatch/storage"
)

// Config configures a Store.
type Config struct {
	// Storage is the listwatch store served through Kubernetes' interface:
	// the etcd store (storage/etcd3), the cacher, or any other
	// implementation of the listwatch contract. Required.
	Storage lwstorage.Interface

	// CompactRevision reports the newest etcd revision known to have been
	// compacted; Store.CompactRevision returns it. nil means: Storage's own
	// CompactRevision() int64 method when it has one, else always 0 ("no
	// compaction observed", which is what Kubernetes' etcd3 store reports
	// before it sees one).
	CompactRevision func() int64

	// ShareWatchEncodings serves the watches of API clients (the watch's
	// context carries k8s.io/apiserver's RequestInfo) with Storage's
	// WatchEncoded, so Storage must implement storage.EncodedWatcher (the
	// cacher does). Each event's object then comes as a
	// *storage.EncodedObject, a runtime.CacheableObject whose encodings
	// every watcher of the change shares, and k8s.io/apiserver's encoders
	// encode an event once per format for all the watchers it reaches
	// instead of once per watcher. The watch returned is Storage's own: no
	// goroutine or channel of the adapter's in between. StorageDecorator
	// sets it for cached resources.
	ShareWatchEncodings bool
}

// compactRevisioner is implemented by listwatch stores that track the
// compacted revision.
type compactRevisioner interface {
	CompactRevision() int64
}

// Store implements k8s.io/apiserver/pkg/storage.Interface on top of a
// listwatch storage.Interface. It is safe for concurrent use.
type Store struct {
	s          lwstorage.Interface
	compactRev func() int64

	encoded lwstorage.EncodedWatcher // s, with Config.ShareWatchEncodings

	mu       sync.Mutex
	sizeKeys k8sstorage.KeysFunc // set by EnableResourceSizeEstimation; see there

	// tr is the etcd store's transformer when StorageDecorator built s.
	tr *transformerSlot
}

var _ k8sstorage.Interface = (*Store)(nil)

// New returns a Store serving cfg.Storage.
func New(cfg Config) (*Store, error) {
	if cfg.Storage == nil {
		return nil, errors.New("k8scompat: Config.Storage is required")
	}
	s := &Store{s: cfg.Storage, compactRev: cfg.CompactRevision}
	if cfg.ShareWatchEncodings {
		ew, ok := cfg.Storage.(lwstorage.EncodedWatcher)
		if !ok {
			return nil, fmt.Errorf("k8scompat: Config.ShareWatchEncodings needs a Storage implementing storage.EncodedWatcher, %T does not", cfg.Storage)
		}
		s.encoded = ew
	}
	if s.compactRev == nil {
		if c, ok := cfg.Storage.(compactRevisioner); ok {
			s.compactRev = c.CompactRevision
		}
	}
	return s, nil
}

// Unwrap returns the listwatch store behind s.
func (s *Store) Unwrap() lwstorage.Interface { return s.s }

// Versioner implements storage.Interface.
func (s *Store) Versioner() k8sstorage.Versioner {
	return versioner{v: s.s.Versioner()}
}

// Create implements storage.Interface.
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	err := s.s.Create(ctx, key, obj, out, ttl)
	if err == nil {
		return nil
	}
	kerr := toK8s(err, opOther)
	// Kubernetes reports an object that already carries a resourceVersion
	// with the ErrResourceVersionSetOnCreate sentinel; listwatch rejects it
	// with a typed error of its own. Keep both identities.
	if lwstorage.IsCode(err, lwstorage.CodeInvalidObj) || lwstorage.IsCode(err, lwstorage.CodeInvalidArgument) {
		if rv, rvErr := s.s.Versioner().ObjectResourceVersion(obj); rvErr == nil && rv != 0 {
			return fmt.Errorf("%w: %w", k8sstorage.ErrResourceVersionSetOnCreate, kerr)
		}
	}
	return kerr
}

// Delete implements storage.Interface.
//
// DeleteOptions.ExpectTransformOrDecodeError (the unsafe deletion of a
// corrupt object) maps to listwatch's DeleteOptions.IgnoreStoreReadError.
// Kubernetes additionally requires such a delete to fail with InvalidObj
// when the object can in fact be read; the adapter checks that with a Get
// first, so a suggestion (cachedExistingObject) never bypasses the check.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *k8sstorage.Preconditions,
	validateDeletion k8sstorage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts k8sstorage.DeleteOptions) error {
	lwOpts := lwstorage.DeleteOptions{}
	if opts.ExpectTransformOrDecodeError {
		ctx = withExpectCorrupt(ctx)
		if err := s.expectUnreadable(ctx, key, out); err != nil {
			return err
		}
		lwOpts.IgnoreStoreReadError = true
		cachedExistingObject = nil
	}
	err := s.s.Delete(ctx, key, out, toPreconditions(preconditions), toValidateFunc(validateDeletion), cachedExistingObject, lwOpts)
	return toK8s(err, opOther)
}

// expectUnreadable returns nil when the object at key exists but cannot be
// transformed or decoded, and the error Kubernetes returns otherwise.
func (s *Store) expectUnreadable(ctx context.Context, key string, out runtime.Object) error {
	probe := out.DeepCopyObject()
	err := s.s.Get(ctx, key, lwstorage.GetOptions{}, probe)
	switch {
	case err == nil:
		return k8sstorage.NewInvalidObjError(key,
			"the object can be transformed and decoded; ExpectTransformOrDecodeError applies only to corrupt objects")
	case lwstorage.IsCode(err, lwstorage.CodeCorruptObj):
		return nil
	}
	return toK8s(err, opOther)
}

// Watch implements storage.Interface: the watch is the listwatch store's
// own. Events, including bookmarks and the final error event (a
// *metav1.Status), pass through unchanged; with ShareWatchEncodings the
// objects of an API client's events are *storage.EncodedObject (see
// Config). Once
// the watch is set up, the API priority and fairness initialization signal
// in ctx (if any) is fired. A watch on an already cancelled context is, as in
// Kubernetes, not an error but a watch whose result channel is closed.
func (s *Store) Watch(ctx context.Context, key string, opts k8sstorage.ListOptions) (watch.Interface, error) {
	lwOpts, err := toListOptions(opts)
	if err != nil {
		return nil, err
	}
	var w watch.Interface
	if s.encoded != nil && servesAPIClient(ctx) {
		w, err = s.encoded.WatchEncoded(ctx, key, lwOpts)
	} else {
		w, err = s.s.Watch(ctx, key, lwOpts)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			// Kubernetes does not treat a watch on a cancelled context as
			// an error: it returns a watch that is already closed.
			return watch.NewEmptyWatch(), nil
		}
		return nil, toK8s(err, opWatch)
	}
	// Tell API priority and fairness (when the request carries its
	// initialization signal) that the watch is set up and its seat can be
	// released; Kubernetes' etcd3 store does the same once Watch returns.
	utilflowcontrol.WatchInitialized(ctx)
	return w, nil
}

// Get implements storage.Interface.
func (s *Store) Get(ctx context.Context, key string, opts k8sstorage.GetOptions, objPtr runtime.Object) error {
	lwOpts, err := toGetOptions(opts)
	if err != nil {
		return err
	}
	return toK8s(s.s.Get(ctx, key, lwOpts, objPtr), opOther)
}

// GetList implements storage.Interface.
func (s *Store) GetList(ctx context.Context, key string, opts k8sstorage.ListOptions, listObj runtime.Object) error {
	lwOpts, err := toListOptions(opts)
	if err != nil {
		return err
	}
	o := opList
	if opts.Predicate.Limit > 0 || opts.Predicate.Continue != "" {
		o = opPagedList
	}
	return toK8s(s.s.GetList(ctx, key, lwOpts, listObj), o)
}

// GuaranteedUpdate implements storage.Interface. tryUpdate receives the
// ResponseMeta listwatch computed; errors it returns come back unchanged.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *k8sstorage.Preconditions, tryUpdate k8sstorage.UpdateFunc, cachedExistingObject runtime.Object) error {
	err := s.s.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, toPreconditions(preconditions),
		toUpdateFunc(tryUpdate), cachedExistingObject, lwstorage.UpdateOptions{})
	return toK8s(err, opOther)
}

// Stats implements storage.Interface. EstimatedAverageObjectSizeBytes is
// always 0: listwatch stores do not report stored sizes (see
// EnableResourceSizeEstimation).
func (s *Store) Stats(ctx context.Context) (k8sstorage.Stats, error) {
	st, err := s.s.Stats(ctx)
	if err != nil {
		return k8sstorage.Stats{}, toK8s(err, opOther)
	}
	return k8sstorage.Stats{ObjectCount: st.ObjectCount}, nil
}

// ReadinessCheck implements storage.Interface. A listwatch not-ready error
// is returned wrapped so that errors.Is(err, storage.ErrStorageNotReady)
// holds, as for Kubernetes' cacher.
func (s *Store) ReadinessCheck() error {
	err := s.s.ReadinessCheck()
	if err == nil {
		return nil
	}
	if lwstorage.IsCode(err, lwstorage.CodeNotReady) {
		return fmt.Errorf("%w: %w", k8sstorage.ErrStorageNotReady, err)
	}
	return toK8s(err, opOther)
}

// RequestWatchProgress implements storage.Interface.
func (s *Store) RequestWatchProgress(ctx context.Context) error {
	return toK8s(s.s.RequestWatchProgress(ctx), opOther)
}

// GetCurrentResourceVersion implements storage.Interface.
func (s *Store) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	rv, err := s.s.GetCurrentResourceVersion(ctx)
	return rv, toK8s(err, opOther)
}

// EnableResourceSizeEstimation implements storage.Interface.
//
// Not supported: listwatch stores do not expose the stored size of objects,
// so no estimate is produced and Stats keeps reporting
// EstimatedAverageObjectSizeBytes 0, which Kubernetes' API priority and
// fairness reads as "unknown" and replaces with its conservative maximum.
// The call is accepted (with Kubernetes' own argument checks) rather than
// refused, because Kubernetes' cacher makes it while being built whenever
// the SizeBasedListCostEstimate feature is on, and refusing would make the
// cacher unusable over this adapter.
func (s *Store) EnableResourceSizeEstimation(keys k8sstorage.KeysFunc) error {
	if keys == nil {
		return errors.New("k8scompat: KeysFunc cannot be nil")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sizeKeys != nil {
		return errors.New("k8scompat: resource size estimation already enabled")
	}
	s.sizeKeys = keys
	return nil
}

// CompactRevision implements storage.Interface: see Config.CompactRevision.
func (s *Store) CompactRevision() int64 {
	if s.compactRev == nil {
		return 0
	}
	return s.compactRev()
}

func apiBadRequest(err error) error {
	return apierrors.NewBadRequest(err.Error())
}
