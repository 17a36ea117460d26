package storage

import (
	"fmt"
	"strings"
)

// ValidateKey checks a key passed to a storage method, with Kubernetes' rules
// and wording: no NUL and no "." or ".." segments ("invalid key"), not "" or
// "/" ("empty key"), and below resourcePrefix ("lacks resource prefix"). A
// single-object key must be strictly below the prefix ("/widgets/x"); a
// recursive key may also be the prefix itself ("/widgets"). An empty
// resourcePrefix allows any key. Errors wrap ErrInvalidArgument.
func ValidateKey(key, resourcePrefix string, recursive bool) error {
	if strings.ContainsRune(key, 0) {
		return NewInvalidArgumentError(fmt.Sprintf("invalid key: %q contains NUL", key), nil)
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return NewInvalidArgumentError(fmt.Sprintf("invalid key: %q", key), nil)
		}
	}
	if key == "" || key == "/" {
		return NewInvalidArgumentError(fmt.Sprintf("empty key: %q", key), nil)
	}
	if rp := strings.TrimSuffix(resourcePrefix, "/"); rp != "" && !underPrefix(key, rp, recursive) {
		if recursive && !strings.HasSuffix(key, "/") {
			key += "/"
		}
		return NewInvalidArgumentError(fmt.Sprintf("invalid key: %q lacks resource prefix: %q", key, rp+"/"), nil)
	}
	return nil
}

// underPrefix reports whether key, with a "/" appended when recursive and
// missing, starts with rp + "/" (rp has no trailing "/"), without building
// either string.
func underPrefix(key, rp string, recursive bool) bool {
	if !strings.HasPrefix(key, rp) {
		return false
	}
	if len(key) == len(rp) {
		return recursive
	}
	return key[len(rp)] == '/'
}
