package storage

import (
	"context"
	"errors"
	"math"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParseRV: the wire forms of an RV and their parsed values; anything
// else is a typed 400.
func TestParseRV(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  RV
		unset bool
		rev   uint64
	}{
		{"", RV{}, true, 0},
		{"0", RVAny, false, 0},
		{"7", RVAt(7), false, 7},
		{"9223372036854775807", RVAt(1<<63 - 1), false, 1<<63 - 1},
		{"18446744073709551615", RVAt(math.MaxUint64), false, math.MaxUint64},
	} {
		got, err := ParseRV(tc.in)
		if err != nil || got != tc.want || got.IsUnset() != tc.unset || got.Revision() != tc.rev || got.String() != tc.in {
			t.Errorf("ParseRV(%q) = %+v (unset %v, rev %d, %q), %v; want %+v", tc.in, got, got.IsUnset(),
				got.Revision(), got.String(), err, tc.want)
		}
	}
	for _, in := range []string{"x", "-3", "00", "1.5", " 1", "18446744073709551616"} {
		got, err := ParseRV(in)
		var se *Error
		if !errors.As(err, &se) || se.Code != CodeInvalidArgument || se.Status().Code != 400 {
			t.Errorf("ParseRV(%q) = %+v, %v; want a 400 *Error", in, got, err)
		}
		if got != (RV{}) {
			t.Errorf("ParseRV(%q) = %+v with its error, want the zero RV", in, got)
		}
	}
	for _, rv := range []RV{RVAt(1 << 63), RVAt(math.MaxUint64)} {
		if _, err := rv.validRevision(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v.validRevision(): %v, want ErrInvalidArgument", rv, err)
		}
	}
	if RVAt(0) != RVAny || RVAny.String() != "0" {
		t.Errorf("RVAt(0) = %+v, RVAny = %q; want the RV \"0\"", RVAt(0), RVAny.String())
	}
}

// TestCheckReachable: an RV above any revision etcd can have is too large
// at once, naming the current revision; every other RV passes without
// asking for it.
func TestCheckReachable(t *testing.T) {
	asked := 0
	current := func(context.Context) (uint64, error) { asked++; return 42, nil }
	for _, rv := range []RV{{}, RVAny, RVAt(1), RVAt(math.MaxInt64)} {
		if err := CheckReachable(context.Background(), rv, current); err != nil {
			t.Errorf("CheckReachable(%q) = %v, want nil", rv.String(), err)
		}
	}
	if asked != 0 {
		t.Errorf("the current revision was read %d times for reachable RVs", asked)
	}
	err := CheckReachable(context.Background(), RVAt(math.MaxUint64), current)
	var se *Error
	if !errors.As(err, &se) || se.Code != CodeTooLargeResourceVersion {
		t.Fatalf("CheckReachable(MaxUint64) = %v, want too large", err)
	}
	st := se.Status()
	want := "Timeout: Too large resource version: 18446744073709551615, current: 42"
	if st.Code != 504 || st.Message != want || st.Details == nil || len(st.Details.Causes) != 1 ||
		st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge || se.Oldest != 42 {
		t.Fatalf("status %+v (oldest %d), want 504 %q with the ResourceVersionTooLarge cause", st, se.Oldest, want)
	}
	down := errors.New("etcd is down")
	if err := CheckReachable(context.Background(), RVAt(1<<63), func(context.Context) (uint64, error) { return 0, down }); !errors.Is(err, down) {
		t.Fatalf("CheckReachable with the current revision unknown = %v, want its error", err)
	}
}
