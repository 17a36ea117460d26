// Package value defines the hook that transforms object bytes on their way to
// and from etcd (for example encryption at rest), with an identity default and
// an AES-GCM implementation.
package value

import (
	"context"
	"errors"
)

// ErrUnavailable marks (errors.Is) a transformer error that says nothing
// about the stored value: the transformer could not run at all, for example
// because its key-management service is unreachable. Stores then report an
// internal error naming the key instead of a corrupt object, and a list stops
// there instead of reading past it. Wrap it with fmt.Errorf("...: %w",
// value.ErrUnavailable, ...); a transformer error caused by the context
// ending is read the same way. Every other error means the value is corrupt.
var ErrUnavailable = errors.New("value: transformer unavailable")

// IsUnavailable reports whether a TransformFromStorage error is not about
// the value (ErrUnavailable, or the context cancelled or past its deadline).
func IsUnavailable(err error) bool {
	return errors.Is(err, ErrUnavailable) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// Context is the authenticated data bound to a transformed value: the etcd
// key, so that a value copied to another key fails to decrypt.
type Context interface {
	AuthenticatedData() []byte
}

// DefaultContext is a Context holding the authenticated bytes directly.
type DefaultContext []byte

// AuthenticatedData implements Context.
func (c DefaultContext) AuthenticatedData() []byte { return c }

// Transformer converts values between their stored and their plain form.
type Transformer interface {
	// TransformFromStorage returns the plain bytes of a stored value. stale
	// reports that the value should be rewritten (for example with a newer
	// key); the store then rewrites it on the next update even if nothing
	// else changed.
	TransformFromStorage(ctx context.Context, data []byte, dataCtx Context) (out []byte, stale bool, err error)
	// TransformToStorage returns the bytes to store for a plain value.
	TransformToStorage(ctx context.Context, data []byte, dataCtx Context) (out []byte, err error)
}

// Identity leaves values unchanged.
var Identity Transformer = identity{}

type identity struct{}

func (identity) TransformFromStorage(_ context.Context, data []byte, _ Context) ([]byte, bool, error) {
	return data, false, nil
}

func (identity) TransformToStorage(_ context.Context, data []byte, _ Context) ([]byte, error) {
	return data, nil
}
