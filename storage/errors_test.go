package storage

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestErrorsMatchSentinelsThroughWrapping(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		sentinel *Error
		apiCheck func(error) bool
		code     int32
	}{
		{"not found", NewNotFoundError("/w/a", 3), ErrNotFound, apierrors.IsNotFound, http.StatusNotFound},
		{"key exists", NewKeyExistsError("/w/a", 3), ErrKeyExists, apierrors.IsAlreadyExists, http.StatusConflict},
		{"conflict", NewConflictError("/w/a", 3, "rv mismatch"), ErrConflict, apierrors.IsConflict, http.StatusConflict},
		{"invalid obj", NewInvalidObjError("/w/a", "bad"), ErrInvalidObj, apierrors.IsInvalid, http.StatusUnprocessableEntity},
		{"invalid arg", NewInvalidArgumentError("bad rv", nil), ErrInvalidArgument, apierrors.IsBadRequest, http.StatusBadRequest},
		{"gone", NewGoneError(5, 9), ErrGone, apierrors.IsResourceExpired, http.StatusGone},
		{"too large", NewTooLargeResourceVersionError(50, 9, 1), ErrTooLargeResourceVersion, apierrors.IsTimeout, http.StatusGatewayTimeout},
		{"not ready", &Error{Code: CodeNotReady, RetryAfterSeconds: 1}, ErrNotReady, apierrors.IsTooManyRequests, http.StatusTooManyRequests},
		{"corrupt", NewCorruptObjError("/w/a", errors.New("bad bytes")), ErrCorruptObj, apierrors.IsInternalError, http.StatusInternalServerError},
		{"too big", &Error{Code: CodeRequestTooLarge}, ErrRequestTooLarge, apierrors.IsRequestEntityTooLargeError, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wrapped := fmt.Errorf("layer: %w", tc.err)
			if !errors.Is(wrapped, tc.sentinel) {
				t.Fatalf("errors.Is(%v, sentinel) = false", wrapped)
			}
			for _, other := range []*Error{ErrNotFound, ErrGone, ErrConflict} {
				if other != tc.sentinel && errors.Is(wrapped, other) {
					t.Fatalf("%v matches unrelated sentinel %v", wrapped, other)
				}
			}
			if !tc.apiCheck(wrapped) {
				t.Fatalf("apierrors check failed for %v (status %+v)", wrapped, tc.err.(*Error).Status())
			}
			if got := tc.err.(*Error).Status().Code; got != tc.code {
				t.Fatalf("HTTP code = %d, want %d", got, tc.code)
			}
		})
	}
}

func TestTooLargeResourceVersionCarriesCause(t *testing.T) {
	err := NewTooLargeResourceVersionError(10, 4, 2)
	st := err.Status()
	if st.Details == nil || len(st.Details.Causes) != 1 || st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
		t.Fatalf("status lacks the too-large cause: %+v", st.Details)
	}
	if s, ok := apierrors.SuggestsClientDelay(err); !ok || s != 2 {
		t.Fatalf("SuggestsClientDelay = %d, %v; want 2, true", s, ok)
	}
}

func TestErrorMessageNamesKeyAndCause(t *testing.T) {
	err := NewCorruptObjError("/w/ns/a", errors.New("cipher: message authentication failed"))
	want := `stored object cannot be decoded (key "/w/ns/a"): cipher: message authentication failed`
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err.Error(), want)
	}
	var se *Error
	if !errors.As(fmt.Errorf("x: %w", err), &se) || se.Key != "/w/ns/a" {
		t.Fatalf("errors.As did not recover the key: %+v", se)
	}
}

// TestUnavailableErrorNamesEndpointsAndRetries: an unavailable etcd is a
// 503 ServiceUnavailable with Retry-After, matching ErrUnavailable however
// wrapped, and its message names the endpoints and the cause.
func TestUnavailableErrorNamesEndpointsAndRetries(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:2379: connect: connection refused")
	err := fmt.Errorf("layer: %w", NewUnavailableError([]string{"http://127.0.0.1:2379", "http://127.0.0.1:22379"}, cause))
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrUnreachable) || !errors.Is(err, cause) {
		t.Fatalf("errors.Is fails for %v", err)
	}
	if errors.Is(err, ErrTimeout) || errors.Is(err, ErrNotReady) {
		t.Fatalf("%v matches an unrelated sentinel", err)
	}
	want := "etcd is unavailable at http://127.0.0.1:2379, http://127.0.0.1:22379: dial tcp 127.0.0.1:2379: connect: connection refused"
	if err.Error() != "layer: "+want {
		t.Fatalf("message %q, want %q", err.Error(), want)
	}
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("apierrors.IsServiceUnavailable(%v) = false", err)
	}
	var se *Error
	errors.As(err, &se)
	st := se.Status()
	if st.Code != http.StatusServiceUnavailable || st.Details == nil || st.Details.RetryAfterSeconds < 1 {
		t.Fatalf("status %+v: want 503 with RetryAfterSeconds", st)
	}
	if len(se.Endpoints) != 2 {
		t.Fatalf("Endpoints = %v", se.Endpoints)
	}
}

// TestStatusMessageNamesNoInternals: what a client is told (the Status
// message) names no storage key, etcd endpoint or etcd/gRPC cause; the
// error's text (for the log) keeps them all.
func TestStatusMessageNamesNoInternals(t *testing.T) {
	etcdErr := errors.New("etcdserver: mvcc: required revision has been compacted")
	gone := NewGoneError(2, 5)
	gone.Key, gone.Err = "/widgets/default", etcdErr
	unavailable := NewUnavailableError([]string{"http://10.0.0.1:2379"},
		errors.New("rpc error: code = Unavailable desc = connection refused"))
	unknown := NewOutcomeUnknownError([]string{"http://10.0.0.1:2379"}, errors.New("no answer within 10s"))
	corrupt := NewCorruptObjError("/widgets/ns/a", errors.New("unable to transform key"))
	nul := ValidateKey("/widgets/ns/a\x00b", "/widgets", false)
	for _, err := range []error{gone, unavailable, unknown, corrupt, nul, fmt.Errorf("wrapped: %w", gone)} {
		msg := StatusOf(err).Message
		for _, internal := range []string{"/widgets", "10.0.0.1", "etcdserver", "rpc error", "transform", "\x00"} {
			if strings.Contains(msg, internal) {
				t.Errorf("%v: the client is told %q, naming %q", err, msg, internal)
			}
		}
	}
	if msg := StatusOf(gone).Message; msg != "too old resource version: 2 (5)" {
		t.Errorf("410 message %q, want Kubernetes' wording", msg)
	}
	for _, err := range []error{gone, unavailable, corrupt, nul} {
		if !strings.Contains(err.Error(), "/widgets") && !strings.Contains(err.Error(), "10.0.0.1") {
			t.Errorf("%v: the log text lost the key or endpoint", err)
		}
	}
}
