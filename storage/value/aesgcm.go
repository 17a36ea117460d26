package value

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
)

// AESGCMPrefix starts every value written by the AES-GCM transformer. The
// full format is
//
//	"lw:enc:aesgcm:v1:" + <key name> + ":" + <12-byte random nonce> + <ciphertext and tag>
//
// The authenticated data is the Context (the etcd key), so a value copied
// to another key does not decrypt.
const AESGCMPrefix = "lw:enc:aesgcm:v1:"

// ErrDecrypt is matched (errors.Is) by every error the AES-GCM transformer
// returns when reading a value: unknown key name, wrong key, tampered or
// moved value, value not encrypted.
var ErrDecrypt = errors.New("value: cannot decrypt")

// AESGCMKey is a named AES key of 16, 24 or 32 bytes.
type AESGCMKey struct {
	// Name identifies the key in stored values; non-empty, without ':'.
	Name string
	// Secret is the AES key: 16, 24 or 32 bytes.
	Secret []byte
}

// AESGCMConfig configures NewAESGCM.
type AESGCMConfig struct {
	// Keys are the keys in order of preference: the first encrypts new
	// values; all of them decrypt. Reading a value encrypted with any key but
	// the first reports it stale, so the store rewrites it with the first.
	Keys []AESGCMKey
	// AllowPlaintext lets values without the AES-GCM prefix be read as
	// plain bytes (reported stale), for turning encryption on over existing
	// data. false means such values are an error.
	AllowPlaintext bool
}

// AESGCM is a Transformer that encrypts values with AES-GCM.
type AESGCM struct {
	write          namedAEAD
	byName         map[string]cipher.AEAD
	allowPlaintext bool
}

type namedAEAD struct {
	name string
	aead cipher.AEAD
}

var _ Transformer = (*AESGCM)(nil)

// NewAESGCM validates cfg and returns the transformer.
func NewAESGCM(cfg AESGCMConfig) (*AESGCM, error) {
	if len(cfg.Keys) == 0 {
		return nil, errors.New("value: AES-GCM needs at least one key")
	}
	t := &AESGCM{byName: make(map[string]cipher.AEAD, len(cfg.Keys)), allowPlaintext: cfg.AllowPlaintext}
	for i, k := range cfg.Keys {
		if k.Name == "" || strings.Contains(k.Name, ":") {
			return nil, fmt.Errorf("value: AES-GCM key name %q must be non-empty and must not contain ':'", k.Name)
		}
		if _, dup := t.byName[k.Name]; dup {
			return nil, fmt.Errorf("value: duplicate AES-GCM key name %q", k.Name)
		}
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("value: AES-GCM key %q: %w", k.Name, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("value: AES-GCM key %q: %w", k.Name, err)
		}
		t.byName[k.Name] = aead
		if i == 0 {
			t.write = namedAEAD{name: k.Name, aead: aead}
		}
	}
	return t, nil
}

// TransformToStorage implements Transformer: it encrypts data with the first key.
func (t *AESGCM) TransformToStorage(_ context.Context, data []byte, dataCtx Context) ([]byte, error) {
	aead := t.write.aead
	head := AESGCMPrefix + t.write.name + ":"
	out := make([]byte, len(head)+aead.NonceSize(), len(head)+aead.NonceSize()+len(data)+aead.Overhead())
	copy(out, head)
	nonce := out[len(head):]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("value: reading a random nonce: %w", err)
	}
	return aead.Seal(out, nonce, data, authData(dataCtx)), nil
}

// TransformFromStorage implements Transformer: it decrypts data with the
// key named in it; stale is true unless that key is the first one.
func (t *AESGCM) TransformFromStorage(_ context.Context, data []byte, dataCtx Context) ([]byte, bool, error) {
	rest, ok := bytes.CutPrefix(data, []byte(AESGCMPrefix))
	if !ok {
		if t.allowPlaintext {
			return data, true, nil
		}
		return nil, false, fmt.Errorf("%w: value is not AES-GCM encrypted (no %q prefix)", ErrDecrypt, AESGCMPrefix)
	}
	name, sealed, ok := bytes.Cut(rest, []byte(":"))
	if !ok {
		return nil, false, fmt.Errorf("%w: malformed AES-GCM value: no key name", ErrDecrypt)
	}
	aead, known := t.byName[string(name)]
	if !known {
		return nil, false, fmt.Errorf("%w: value was encrypted with key %q, which is not configured", ErrDecrypt, name)
	}
	if len(sealed) < aead.NonceSize()+aead.Overhead() {
		return nil, false, fmt.Errorf("%w: AES-GCM value too short", ErrDecrypt)
	}
	nonce, ct := sealed[:aead.NonceSize()], sealed[aead.NonceSize():]
	plain, err := aead.Open(nil, nonce, ct, authData(dataCtx))
	if err != nil {
		return nil, false, fmt.Errorf("%w: AES-GCM authentication failed with key %q "+
			"(wrong secret, tampered value, or value moved from another key)", ErrDecrypt, name)
	}
	return plain, string(name) != t.write.name, nil
}

func authData(c Context) []byte {
	if c == nil {
		return nil
	}
	return c.AuthenticatedData()
}
