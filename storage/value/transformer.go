// Package value defines the hook that transforms object bytes on their way to
// and from etcd (for example encryption at rest), with an identity default and
// an AES-GCM implementation.
package value

import "context"

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
