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
// resourcePrefix allows any key. Errors wrap ErrInvalidArgument; they
// carry the key in Key (for the log), not in the message a client sees.
func ValidateKey(key, resourcePrefix string, recursive bool) error {
	if strings.ContainsRune(key, 0) {
		return &Error{Code: CodeInvalidArgument, Key: key, Msg: "invalid key: contains NUL"}
	}
	for seg := range strings.SplitSeq(key, "/") {
		if seg == "." || seg == ".." {
			return &Error{Code: CodeInvalidArgument, Key: key, Msg: "invalid key: a segment is . or .."}
		}
	}
	if key == "" || key == "/" {
		return NewInvalidArgumentError(fmt.Sprintf("empty key: %q", key), nil)
	}
	if rp := strings.TrimSuffix(resourcePrefix, "/"); rp != "" && !underPrefix(key, rp, recursive) {
		if recursive && !strings.HasSuffix(key, "/") {
			key += "/"
		}
		return &Error{Code: CodeInvalidArgument, Key: key,
			Msg: fmt.Sprintf("invalid key: lacks resource prefix: %q", rp+"/")}
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
