package etcd3

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueToken is the JSON inside a continue token; the format is the one
// Kubernetes uses, so tokens interoperate with the cacher and with clients
// that inspect them.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueAPIVersion = "meta.k8s.io/v1"

// encodeContinue returns the token for a list continuing at etcd key next
// (inclusive) under keyPrefix, pinned at revision rv (-1: latest).
func encodeContinue(next, keyPrefix string, rv int64) (string, error) {
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

// decodeContinue parses a token and returns the etcd key to continue from
// and the revision to read at (-1 means latest).
func decodeContinue(token, keyPrefix string) (string, int64, error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("continue token is not valid base64: %w", err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("continue token is not valid JSON: %w", err)
	}
	if c.APIVersion != continueAPIVersion {
		return "", 0, fmt.Errorf("continue token has unsupported version %q", c.APIVersion)
	}
	if c.ResourceVersion == 0 || c.ResourceVersion < -1 {
		return "", 0, fmt.Errorf("continue token has invalid resource version %d", c.ResourceVersion)
	}
	if c.StartKey == "" {
		return "", 0, errors.New("continue token has an empty start key")
	}
	// Reject anything path.Clean would change, so that the start key can
	// never climb above keyPrefix.
	k := c.StartKey
	if !strings.HasPrefix(k, "/") {
		k = "/" + k
	}
	if cleaned := path.Clean(k); cleaned != k {
		return "", 0, fmt.Errorf("continue token start key %q is not a clean path", c.StartKey)
	}
	return keyPrefix + k[1:], c.ResourceVersion, nil
}
