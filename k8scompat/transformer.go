package k8scompat

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	k8setcd3 "k8s.io/apiserver/pkg/storage/etcd3"
	k8svalue "k8s.io/apiserver/pkg/storage/value"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"

	lwvalue "github.com/listwatch/listwatch/storage/value"
)

// Transformer presents a Kubernetes value.Transformer (for example the
// encryption-at-rest transformers Kubernetes builds from an
// EncryptionConfiguration) as a listwatch value.Transformer, so that a
// listwatch store reads and writes the same bytes Kubernetes' etcd3 store
// would. The authenticated data (the etcd key) and the stale flag are passed
// through unchanged, and so are errors: listwatch reads every failure to
// transform a stored value as a corrupt object (see KubernetesTransformer for
// Kubernetes' classification). A nil t means no transformation, as
// Kubernetes' storage uses when no encryption is configured (values stored
// as given; a value that is encrypted with a "k8s:enc:" prefix fails to read).
func Transformer(t k8svalue.Transformer) lwvalue.Transformer {
	if t == nil {
		t = identity.NewEncryptCheckTransformer()
	}
	return transformer{t: t}
}

type transformer struct {
	t k8svalue.Transformer
}

func (t transformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, bool, error) {
	return t.t.TransformFromStorage(ctx, data, dataCtx)
}

func (t transformer) TransformToStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, error) {
	return t.t.TransformToStorage(ctx, data, dataCtx)
}

// KubernetesTransformer is Transformer with Kubernetes' classification of
// transformer errors, for a store whose corrupt-object handling follows
// Kubernetes' AllowUnsafeMalformedObjectDeletion feature
// (allowUnsafeMalformedObjectDeletion is its value).
//
// With the feature on, Kubernetes' etcd3 store reads past a stored value
// whose transformer error it classifies as corrupt (and names it in the
// list's error), but ends a list, and fails a read, with an internal error
// at any other transformer error. It classifies an error as corrupt when its
// own corrupt-object error type is in the chain (its storage factory wraps
// the configured transformer so that every error is of that type;
// StorageDecorator does not, see there). KubernetesTransformer asks
// Kubernetes' code for that classification and marks every other error with
// listwatch's value.ErrUnavailable, which makes the listwatch store end the
// list there with an internal error. The exception is the unsafe deletion
// of a corrupt object (DeleteOptions.ExpectTransformOrDecodeError), which,
// as in Kubernetes, accepts any transformer error. With the feature off
// every error is passed through: the store built for it (MaxCorruptObjects
// -1) ends a list at its first unreadable value.
func KubernetesTransformer(t k8svalue.Transformer, allowUnsafeMalformedObjectDeletion bool) lwvalue.Transformer {
	if t == nil {
		t = identity.NewEncryptCheckTransformer()
	}
	if !allowUnsafeMalformedObjectDeletion {
		return transformer{t: t}
	}
	return classifyingTransformer{t: t}
}

// classifyingTransformer marks the errors Kubernetes does not read as a
// corrupt object as value.ErrUnavailable (see KubernetesTransformer).
type classifyingTransformer struct {
	t k8svalue.Transformer
}

func (c classifyingTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, bool, error) {
	out, stale, err := c.t.TransformFromStorage(ctx, data, dataCtx)
	if err != nil && !lwvalue.IsUnavailable(err) && !expectsCorrupt(ctx) && !isKubernetesCorrupt(err) {
		err = fmt.Errorf("%w: %w", lwvalue.ErrUnavailable, err)
	}
	return out, stale, err
}

func (c classifyingTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx lwvalue.Context) ([]byte, error) {
	return c.t.TransformToStorage(ctx, data, dataCtx)
}

// isKubernetesCorrupt reports whether Kubernetes' storage reads err as a
// corrupt object. The error type Kubernetes checks for is unexported, so
// the question is put to Kubernetes' own code: its corrupt-object deleter
// turns exactly those errors from Get into a CorruptObj storage error.
func isKubernetesCorrupt(err error) bool {
	var se *k8sstorage.StorageError
	if errors.As(err, &se) && se.Code == k8sstorage.ErrCodeCorruptObj {
		return true
	}
	probe := k8setcd3.NewStoreWithUnsafeCorruptObjectDeletion(failingGet{err: err}, schema.GroupResource{})
	return k8sstorage.IsCorruptObject(probe.Get(context.Background(), "", k8sstorage.GetOptions{}, nil))
}

// failingGet is a storage.Interface whose Get returns err (see
// isKubernetesCorrupt); nothing else of it is called.
type failingGet struct {
	k8sstorage.Interface
	err error
}

func (f failingGet) Get(context.Context, string, k8sstorage.GetOptions, runtime.Object) error {
	return f.err
}

// expectCorruptKey marks the context of an unsafe deletion of a corrupt
// object (see withExpectCorrupt).
type expectCorruptKey struct{}

// withExpectCorrupt returns ctx marked as the context of a delete that
// expects the object to be unreadable: every transformer error then counts
// as a corrupt object, as Kubernetes' store counts it for such a delete.
func withExpectCorrupt(ctx context.Context) context.Context {
	return context.WithValue(ctx, expectCorruptKey{}, true)
}

func expectsCorrupt(ctx context.Context) bool {
	v, _ := ctx.Value(expectCorruptKey{}).(bool)
	return v
}
