package storage

import (
	"errors"
	"math"
	"testing"
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
		if _, err := rv.ValidRevision(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%v.ValidRevision(): %v, want ErrInvalidArgument", rv, err)
		}
	}
	if RVAt(0) != RVAny || RVAny.String() != "0" {
		t.Errorf("RVAt(0) = %+v, RVAny = %q; want the RV \"0\"", RVAt(0), RVAny.String())
	}
}
