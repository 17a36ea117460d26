package storage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// sentinels is every code's sentinel.
var sentinels = map[Code]*Error{
	CodeNotFound: ErrNotFound, CodeKeyExists: ErrKeyExists, CodeConflict: ErrConflict,
	CodeInvalidObj: ErrInvalidObj, CodeInvalidArgument: ErrInvalidArgument, CodeGone: ErrGone,
	CodeTooLargeResourceVersion: ErrTooLargeResourceVersion, CodeNotReady: ErrNotReady,
	CodeTimeout: ErrTimeout, CodeCorruptObj: ErrCorruptObj, CodeTooManyRequests: ErrTooManyRequests,
	CodeUnreachable: ErrUnreachable, CodeRequestTooLarge: ErrRequestTooLarge, CodeInternal: ErrInternal,
}

// TestStatusRoundTripKeepsIdentity: every storage error, carried as a
// Status (as a watch ERROR event or an HTTP answer carries it) and turned
// back with FromStatus, matches its own sentinel and no other (but for
// the documented 429 pair), and renders the same Status again.
func TestStatusRoundTripKeepsIdentity(t *testing.T) {
	made := map[Code]*Error{
		CodeCorruptObj:              NewCorruptObjError("/w/a", errors.New("bad bytes")),
		CodeTooLargeResourceVersion: NewTooLargeResourceVersionError(50, 9, 1),
		CodeGone:                    NewGoneError(5, 9),
		CodeUnreachable:             NewUnavailableError([]string{"http://127.0.0.1:2379"}, errors.New("refused")),
	}
	for code := CodeNotFound; code <= CodeInternal; code++ {
		orig, ok := made[code]
		if !ok {
			orig = &Error{Code: code, Key: "/w/a", Msg: "m"}
		}
		t.Run(code.String(), func(t *testing.T) {
			st := StatusOf(fmt.Errorf("layer: %w", orig))
			back := FromStatus(&st)
			var se *Error
			if !errors.As(back, &se) {
				t.Fatalf("FromStatus(%+v) = %T, want *Error", st, back)
			}
			for c, s := range sentinels {
				pair := (code == CodeNotReady || code == CodeTooManyRequests) &&
					(c == CodeNotReady || c == CodeTooManyRequests)
				want := c == code || pair
				if got := errors.Is(fmt.Errorf("again: %w", back), s); got != want {
					t.Errorf("errors.Is(back, %v) = %v, want %v (status %+v)", c, got, want, st)
				}
			}
			if again := StatusOf(back); !reflect.DeepEqual(again, st) {
				t.Errorf("Status changed over the round trip:\n got %+v\nwant %+v", again, st)
			}
			if back.Error() != st.Message {
				t.Errorf("message %q, want %q", back.Error(), st.Message)
			}
		})
	}
}

// TestStatusRoundTripOfListErrors: a corrupt list (StoreReadError) and an
// expired continue token (410 with a fresh token) keep their details.
func TestStatusRoundTripOfListErrors(t *testing.T) {
	corrupt := &Error{Code: CodeCorruptObj, Key: "/w/a", CorruptKeys: []string{"/w/a", "/w/b"}}
	st := StatusOf(corrupt)
	back := FromStatus(&st)
	if !errors.Is(back, ErrCorruptObj) || !apierrors.IsStoreReadError(back) {
		t.Fatalf("corrupt list came back as %v", back)
	}
	gone := &Error{Code: CodeGone, Continue: "tok"}
	st = StatusOf(gone)
	var se *Error
	if !errors.As(FromStatus(&st), &se) || se.Continue != "tok" || !apierrors.IsResourceExpired(se) {
		t.Fatalf("expired continue came back as %+v", se)
	}
}

// TestStatusOfOtherErrors: a deadline is 504 and comes back as ErrTimeout;
// a plain error is a 500 ErrInternal; a Status no storage code stands for
// stays an apierrors.StatusError; a Status with only an HTTP code still
// finds its code.
func TestStatusOfOtherErrors(t *testing.T) {
	st := StatusOf(fmt.Errorf("get: %w", context.DeadlineExceeded))
	if st.Code != http.StatusGatewayTimeout || !errors.Is(FromStatus(&st), ErrTimeout) {
		t.Fatalf("deadline: %+v", st)
	}
	st = StatusOf(errors.New("boom"))
	if st.Code != http.StatusInternalServerError || !errors.Is(FromStatus(&st), ErrInternal) {
		t.Fatalf("plain error: %+v", st)
	}
	st = StatusOf(apierrors.NewForbidden(schema.GroupResource{Resource: "widgets"}, "a", errors.New("no")))
	var se *apierrors.StatusError
	if err := FromStatus(&st); !errors.As(err, &se) || !apierrors.IsForbidden(err) {
		t.Fatalf("forbidden came back as %T %v", err, err)
	}
	bare := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusGone}
	if !errors.Is(FromStatus(bare), ErrGone) {
		t.Fatal("a bare 410 is not ErrGone")
	}
	if FromStatus(nil) != nil {
		t.Fatal("FromStatus(nil) != nil")
	}
}
