package storage

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ListRequest is what the resource-version, resource-version-match and
// continue options of a GetList ask for, per the table in the package doc.
// Exactly one of Consistent, Exact > 0 or "MinRV (possibly 0)" applies.
type ListRequest struct {
	// Consistent asks for the latest state (RV "", or a continue token
	// issued for the latest state).
	Consistent bool
	// Exact asks for the state exactly at this revision (0: not exact).
	Exact uint64
	// MinRV asks for a state at least this new (0: any state) when neither
	// Consistent nor Exact is set.
	MinRV uint64
	// StartKey is the key a continue token resumes at (inclusive); "" when
	// the request has no continue token.
	StartKey string
}

// ParseListRequest validates opts and returns what they ask for. keyPrefix
// is the prefix continue tokens are relative to. Errors wrap
// ErrInvalidArgument.
func ParseListRequest(opts ListOptions, keyPrefix string) (ListRequest, error) {
	var r ListRequest
	if opts.Recursive && opts.Predicate.Continue != "" {
		if opts.ResourceVersion.Revision() > 0 {
			return r, NewInvalidArgumentError("specifying resource version is not allowed when using continue", nil)
		}
		start, rv, err := DecodeContinue(opts.Predicate.Continue, keyPrefix)
		if err != nil {
			return r, NewInvalidArgumentError("invalid continue token", err)
		}
		r.StartKey = start
		if rv > 0 {
			r.Exact = uint64(rv)
		} else {
			r.Consistent = true
		}
		return r, nil
	}
	rv, err := opts.ResourceVersion.validRevision()
	if err != nil {
		return r, err
	}
	if opts.ResourceVersion.IsUnset() {
		switch opts.ResourceVersionMatch {
		case "", metav1.ResourceVersionMatchNotOlderThan:
			r.Consistent = true
			return r, nil
		case metav1.ResourceVersionMatchExact:
			return r, NewInvalidArgumentError("resourceVersionMatch=Exact needs a resourceVersion", nil)
		}
		return r, NewInvalidArgumentError(fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch), nil)
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		r.MinRV = rv
	case metav1.ResourceVersionMatchExact:
		if rv == 0 {
			return r, NewInvalidArgumentError("resourceVersionMatch=Exact needs a resourceVersion other than 0", nil)
		}
		r.Exact = rv
	case "":
		// Legacy: a limited recursive list at N is an exact read.
		if opts.Recursive && opts.Predicate.Limit > 0 && rv > 0 {
			r.Exact = rv
		} else {
			r.MinRV = rv
		}
	default:
		return r, NewInvalidArgumentError(fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch), nil)
	}
	return r, nil
}
