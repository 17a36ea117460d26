package k8scompat

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	lwstorage "github.com/listwatch/listwatch/storage"
)

func TestToK8sError(t *testing.T) {
	cases := []struct {
		name  string
		in    error
		op    op
		check func(error) bool
	}{
		{"not found", lwstorage.NewNotFoundError("/pods/a", 3), opOther, k8sstorage.IsNotFound},
		{"wrapped not found", fmt.Errorf("ctx: %w", lwstorage.NewNotFoundError("/pods/a", 3)), opOther, k8sstorage.IsNotFound},
		{"exists", lwstorage.NewKeyExistsError("/pods/a", 3), opOther, k8sstorage.IsExist},
		{"precondition", lwstorage.NewConflictError("/pods/a", 3, "Precondition failed"), opOther, k8sstorage.IsInvalidObj},
		{"invalid obj", lwstorage.NewInvalidObjError("/pods/a", "bad"), opOther, k8sstorage.IsInvalidObj},
		{"timeout", &lwstorage.Error{Code: lwstorage.CodeTimeout}, opOther, k8sstorage.IsRequestTimeout},
		{"unreachable", &lwstorage.Error{Code: lwstorage.CodeUnreachable}, opOther, k8sstorage.IsUnreachable},
		{"corrupt is internal", lwstorage.NewCorruptObjError("/pods/a", errors.New("bits")), opOther, k8sstorage.IsInternalError},
		{"corrupt is corrupt", lwstorage.NewCorruptObjError("/pods/a", errors.New("bits")), opOther, k8sstorage.IsCorruptObject},
		{"bad argument", lwstorage.NewInvalidArgumentError("bad rv", nil), opOther, apierrors.IsBadRequest},
		{"gone", lwstorage.NewGoneError(5, 7), opOther, apierrors.IsResourceExpired},
		{"too large", lwstorage.NewTooLargeResourceVersionError(10, 5, 1), opOther, k8sstorage.IsTooLargeResourceVersion},
		{"not ready", &lwstorage.Error{Code: lwstorage.CodeNotReady}, opOther, apierrors.IsTooManyRequests},
		{"too many", &lwstorage.Error{Code: lwstorage.CodeTooManyRequests, RetryAfterSeconds: 2}, opOther, apierrors.IsTooManyRequests},
		{"request too large", &lwstorage.Error{Code: lwstorage.CodeRequestTooLarge}, opOther, apierrors.IsRequestEntityTooLargeError},
		{"unknown", &lwstorage.Error{Code: lwstorage.CodeUnknown}, opOther, apierrors.IsInternalError},
		{"list gone message", lwstorage.NewGoneError(5, 0), opList, func(err error) bool {
			return apierrors.IsResourceExpired(err) && strings.Contains(err.Error(), msgListExpired)
		}},
		{"paged list gone message", lwstorage.NewGoneError(5, 0), opPagedList, func(err error) bool {
			return apierrors.IsResourceExpired(err) && strings.Contains(err.Error(), "The provided continue parameter is too old")
		}},
		{"watch gone message", lwstorage.NewGoneError(5, 0), opWatch, func(err error) bool {
			return apierrors.IsResourceExpired(err) && strings.Contains(err.Error(), msgWatchExpired)
		}},
		{"watch gone names no key and no etcd text", goneWithInternals(), opWatch, func(err error) bool {
			return apierrors.IsResourceExpired(err) && !strings.Contains(err.Error(), "/pods/") &&
				!strings.Contains(err.Error(), "etcdserver") && strings.Contains(err.Error(), "too old resource version: 5 (7)")
		}},
		{"too many names no key and no etcd text", &lwstorage.Error{Code: lwstorage.CodeTooManyRequests, Key: "/pods/a",
			Msg: "create: too many requests to etcd", Err: errors.New("etcdserver: too many requests")}, opOther, func(err error) bool {
			return apierrors.IsTooManyRequests(err) && !strings.Contains(err.Error(), "/pods/") && !strings.Contains(err.Error(), "etcdserver")
		}},
		{"request too large names no key and no etcd text", &lwstorage.Error{Code: lwstorage.CodeRequestTooLarge, Key: "/pods/a",
			Msg: "create", Err: errors.New("etcdserver: request is too large")}, opOther, func(err error) bool {
			return apierrors.IsRequestEntityTooLargeError(err) && !strings.Contains(err.Error(), "/pods/") && !strings.Contains(err.Error(), "etcdserver")
		}},
		{"bad argument names no key", &lwstorage.Error{Code: lwstorage.CodeInvalidArgument, Key: "/pods/a\x00", Msg: "invalid key: contains NUL"},
			opOther, func(err error) bool {
				return apierrors.IsBadRequest(err) && !strings.Contains(err.Error(), "/pods/") && strings.Contains(err.Error(), "contains NUL")
			}},
		{"other gone names no key and no etcd text", goneWithInternals(), opOther, func(err error) bool {
			return apierrors.IsResourceExpired(err) && !strings.Contains(err.Error(), "/pods/") && !strings.Contains(err.Error(), "etcdserver")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := toK8s(tc.in, tc.op)
			if !tc.check(got) {
				t.Fatalf("toK8s(%v) = %#v: classification failed", tc.in, got)
			}
		})
	}
}

func TestToK8sErrorPassesForeignErrorsThrough(t *testing.T) {
	if ToK8sError(nil) != nil {
		t.Fatal("nil must stay nil")
	}
	foreign := apierrors.NewConflict(schemaPods, "x", errors.New("from tryUpdate"))
	if got := ToK8sError(foreign); got != error(foreign) {
		t.Fatalf("a non-listwatch error must come back unchanged, got %v", got)
	}
}

func TestFromK8sErrorRoundTrip(t *testing.T) {
	codes := []lwstorage.Code{
		lwstorage.CodeNotFound, lwstorage.CodeKeyExists, lwstorage.CodeInvalidObj, lwstorage.CodeTimeout,
		lwstorage.CodeUnreachable, lwstorage.CodeInvalidArgument, lwstorage.CodeGone,
		lwstorage.CodeTooLargeResourceVersion, lwstorage.CodeTooManyRequests, lwstorage.CodeRequestTooLarge,
	}
	for _, c := range codes {
		t.Run(c.String(), func(t *testing.T) {
			k := ToK8sError(&lwstorage.Error{Code: c, Key: "/pods/a", ResourceVersion: 4, Oldest: 3})
			back := FromK8sError(k)
			if !lwstorage.IsCode(back, c) {
				t.Fatalf("round trip of %v gave %v", c, back)
			}
		})
	}
	if got := FromK8sError(k8sstorage.ErrResourceVersionSetOnCreate); !errors.Is(got, lwstorage.ErrInvalidObj) {
		t.Fatalf("ErrResourceVersionSetOnCreate: got %v", got)
	}
	if got := FromK8sError(k8sstorage.ErrStorageNotReady); !errors.Is(got, lwstorage.ErrNotReady) {
		t.Fatalf("ErrStorageNotReady: got %v", got)
	}
	plain := errors.New("plain")
	if FromK8sError(plain) != plain {
		t.Fatal("an unclassified error must come back unchanged")
	}
}

// goneWithInternals is a 410 as the store makes it for a compacted watch:
// it carries the storage key and etcd's own error, which stay in the log.
func goneWithInternals() *lwstorage.Error {
	e := lwstorage.NewGoneError(5, 7)
	e.Key = "/pods/default"
	e.Err = errors.New("etcdserver: mvcc: required revision has been compacted")
	return e
}
