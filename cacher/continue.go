package cacher

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
)

// continueToken is the JSON of a continue token, in the format of the etcd3
// store (and Kubernetes), so that a token of either can be passed to the other.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

const continueAPIVersion = "meta.k8s.io/v1"

// encodeContinue returns the token continuing at key next (inclusive) of a
// list of keyPrefix at rv.
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

// decodeContinue returns the key to continue from and the RV to read at
// (-1: latest).
func decodeContinue(token, keyPrefix string) (string, int64, error) {
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
