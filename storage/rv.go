package storage

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// RV is the resource version a Get, GetList or Watch names, parsed once
// where the request enters the process (ParseRV at the HTTP or Kubernetes
// edge, RVAt for an in-process caller holding a revision) and carried as
// this value from there on. It is one of three things:
//
//   - unset, the zero value (wire ""): the latest state, read consistently;
//   - RVAny (wire "0"): any state, as old as a cache holds;
//   - RVAt(n), n > 0 (wire "n"): a state at least as new as revision n, or
//     exactly n with ResourceVersionMatch Exact.
//
// What each means for each operation is the table in the package doc.
type RV struct {
	rev uint64
	set bool
}

// RVAny is the RV "0": any state a cache holds.
var RVAny = RV{set: true}

// RVAt is the RV naming revision n; RVAt(0) is RVAny.
func RVAt(n uint64) RV { return RV{rev: n, set: true} }

// ParseRV parses a resource version as clients send it: "" is unset, "0"
// is RVAny, a decimal n > 0 that fits in a uint64 is RVAt(n) (as
// Kubernetes parses it). Anything else is an *Error with
// CodeInvalidArgument (400 Bad Request). A revision etcd cannot have (above
// math.MaxInt64) parses: a read at it is too large (CheckReachable).
func ParseRV(s string) (RV, error) {
	switch s {
	case "":
		return RV{}, nil
	case "0":
		return RVAny, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return RV{}, NewInvalidArgumentError(fmt.Sprintf("invalid resource version %q", s), err)
	}
	return RV{rev: n, set: true}, nil
}

// IsUnset reports the zero RV (wire ""): the latest state.
func (r RV) IsUnset() bool { return !r.set }

// Revision is the revision r names: n for RVAt(n), 0 for RVAny and unset.
func (r RV) Revision() uint64 { return r.rev }

// String is r as clients send it: "", "0" or the decimal revision.
func (r RV) String() string {
	if !r.set {
		return ""
	}
	return strconv.FormatUint(r.rev, 10)
}

// validRevision is r's revision for ParseListRequest and
// ParseWatchRequest: Revision, or ErrInvalidArgument when it is above
// math.MaxInt64, which the stores answer before (CheckReachable).
func (r RV) validRevision() (uint64, error) {
	if r.rev > math.MaxInt64 {
		return 0, NewInvalidArgumentError(fmt.Sprintf("invalid resource version %q: out of range", r.String()), nil)
	}
	return r.rev, nil
}

// CheckReachable is the first thing a store's Get, GetList and Watch do
// with the RV they are given: an RV that no revision can ever reach (above
// math.MaxInt64, the largest etcd can have) is answered at once, no wait
// being able to help, as Kubernetes answers an RV newer than it reaches:
// ErrTooLargeResourceVersion (504 with the ResourceVersionTooLarge cause)
// naming the current revision, which current reads. Every other RV is nil.
func CheckReachable(ctx context.Context, rv RV, current func(context.Context) (uint64, error)) error {
	if rv.rev <= math.MaxInt64 {
		return nil
	}
	cur, err := current(ctx)
	if err != nil {
		return err
	}
	return NewTooLargeResourceVersionError(rv.rev, cur, 1)
}
