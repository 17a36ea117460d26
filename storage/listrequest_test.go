package storage

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseListRequest(t *testing.T) {
	tok, err := EncodeContinue("/widgets/ns/b", "/widgets/", 9)
	if err != nil {
		t.Fatal(err)
	}
	latestTok, _ := EncodeContinue("/widgets/ns/c", "/widgets/", -1)
	exact, notOlder := metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan
	cases := []struct {
		name string
		opts ListOptions
		want ListRequest
		bad  bool
	}{
		{"unset is consistent", ListOptions{}, ListRequest{Consistent: true}, false},
		{"unset NotOlderThan is consistent", ListOptions{ResourceVersionMatch: notOlder}, ListRequest{Consistent: true}, false},
		{"zero is any", ListOptions{ResourceVersion: RVAny}, ListRequest{}, false},
		{"N is not older than N", ListOptions{ResourceVersion: RVAt(5)}, ListRequest{MinRV: 5}, false},
		{"N NotOlderThan", ListOptions{ResourceVersion: RVAt(5), ResourceVersionMatch: notOlder}, ListRequest{MinRV: 5}, false},
		{"N Exact", ListOptions{ResourceVersion: RVAt(5), ResourceVersionMatch: exact}, ListRequest{Exact: 5}, false},
		{"legacy limited recursive N is exact", ListOptions{ResourceVersion: RVAt(5), Recursive: true,
			Predicate: SelectionPredicate{Limit: 10}}, ListRequest{Exact: 5}, false},
		{"continue pins its RV", ListOptions{Recursive: true, Predicate: SelectionPredicate{Continue: tok}},
			ListRequest{Exact: 9, StartKey: "/widgets/ns/b"}, false},
		{"continue at latest is consistent", ListOptions{Recursive: true, Predicate: SelectionPredicate{Continue: latestTok}},
			ListRequest{Consistent: true, StartKey: "/widgets/ns/c"}, false},
		{"revision out of range", ListOptions{ResourceVersion: RVAt(1 << 63)}, ListRequest{}, true},
		{"Exact without RV", ListOptions{ResourceVersionMatch: exact}, ListRequest{}, true},
		{"Exact at 0", ListOptions{ResourceVersion: RVAny, ResourceVersionMatch: exact}, ListRequest{}, true},
		{"unknown match", ListOptions{ResourceVersion: RVAt(5), ResourceVersionMatch: "Newest"}, ListRequest{}, true},
		{"continue with RV", ListOptions{ResourceVersion: RVAt(5), Recursive: true, Predicate: SelectionPredicate{Continue: tok}}, ListRequest{}, true},
		{"malformed continue", ListOptions{Recursive: true, Predicate: SelectionPredicate{Continue: "%%"}}, ListRequest{}, true},
	}
	for _, tc := range cases {
		got, err := ParseListRequest(tc.opts, "/widgets/")
		if tc.bad {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%s: err = %v, want ErrInvalidArgument", tc.name, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}
