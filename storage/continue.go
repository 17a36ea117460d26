package storage

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueToken is the JSON inside a continue token. The format is the one
// Kubernetes uses (base64url of {"v","rv","start"}), so tokens of the etcd3
// store and of the cacher can be passed to each other and to clients that
// inspect them.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueAPIVersion = "meta.k8s.io/v1"

// EncodeContinue returns the continue token of a list of keyPrefix that
// continues at key next (inclusive), pinned at revision rv (-1: the latest).
func EncodeContinue(next, keyPrefix string, rv int64) (string, error) {
	start, ok := strings.CutPrefix(next, keyPrefix)
	if !ok {
		return "", fmt.Errorf("continue key %q is not below %q", next, keyPrefix)
	}
	data, err := json.Marshal(continueToken{APIVersion: continueAPIVersion, ResourceVersion: rv, StartKey: start})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(data), nil
}

// DecodeContinue parses a continue token of a list of keyPrefix and returns
// the key to continue from and the revision to read at (-1: the latest).
// The start key can never climb above keyPrefix: a token whose key is not a
// clean path is rejected. Callers wrap the error as ErrInvalidArgument.
func DecodeContinue(token, keyPrefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("continue token is not valid base64: %w", err)
	}
	var t continueToken
	if err := json.Unmarshal(data, &t); err != nil {
		return "", 0, fmt.Errorf("continue token is not valid JSON: %w", err)
	}
	if t.APIVersion != continueAPIVersion {
		return "", 0, fmt.Errorf("continue token has unsupported version %q", t.APIVersion)
	}
	if t.ResourceVersion == 0 || t.ResourceVersion < -1 {
		return "", 0, fmt.Errorf("continue token has invalid resource version %d", t.ResourceVersion)
	}
	if t.StartKey == "" {
		return "", 0, errors.New("continue token has an empty start key")
	}
	k := t.StartKey
	if !strings.HasPrefix(k, "/") {
		k = "/" + k
	}
	if path.Clean(k) != k {
		return "", 0, fmt.Errorf("continue token start key %q is not a clean path", t.StartKey)
	}
	return keyPrefix + k[1:], t.ResourceVersion, nil
}
