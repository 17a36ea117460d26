package storage

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestParseResourceVersion(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		bad  bool
	}{
		{"", 0, false}, {"0", 0, false}, {"1", 1, false}, {"9223372036854775807", 1<<63 - 1, false},
		{"9223372036854775808", 0, true}, {"-1", 0, true}, {"abc", 0, true}, {"1.5", 0, true},
		{" 1", 0, true}, {"00", 0, true}, {"0x10", 0, true},
	}
	for _, tc := range cases {
		got, err := APIObjectVersioner{}.ParseResourceVersion(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Parse(%q) err = %v, want ErrInvalidArgument", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseResourceVersion(f *testing.F) {
	for _, s := range []string{"", "0", "1", "-1", "abc", "18446744073709551615", "00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := APIObjectVersioner{}.ParseResourceVersion(s)
		if err != nil && !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("untyped error %v", err)
		}
		if err == nil && v > 1<<63-1 {
			t.Fatalf("accepted %d beyond int64", v)
		}
	})
}

func TestVersionerObjectsAndLists(t *testing.T) {
	v := APIObjectVersioner{}
	u := &unstructured.Unstructured{}
	u.SetName("a")
	u.SetResourceVersion("7")
	u.SetSelfLink("/x")
	if rv, err := v.ObjectResourceVersion(u); err != nil || rv != 7 {
		t.Fatalf("ObjectResourceVersion = %d, %v", rv, err)
	}
	if err := v.PrepareObjectForStorage(u); err != nil || u.GetResourceVersion() != "" || u.GetSelfLink() != "" {
		t.Fatalf("PrepareObjectForStorage left rv=%q selfLink=%q (%v)", u.GetResourceVersion(), u.GetSelfLink(), err)
	}
	if err := v.UpdateObject(u, 12); err != nil || u.GetResourceVersion() != "12" {
		t.Fatalf("UpdateObject: %q %v", u.GetResourceVersion(), err)
	}
	l := &metav1.List{}
	n := int64(3)
	if err := v.UpdateList(l, 9, "tok", &n); err != nil || l.ResourceVersion != "9" || l.Continue != "tok" || *l.RemainingItemCount != 3 {
		t.Fatalf("UpdateList: %+v %v", l.ListMeta, err)
	}
	if err := v.UpdateList(l, 0, "", nil); err == nil {
		t.Fatal("UpdateList accepted RV 0")
	}
}

func TestPreconditions(t *testing.T) {
	u := &unstructured.Unstructured{}
	u.SetUID(types.UID("uid-1"))
	u.SetResourceVersion("5")
	rv5, rv6 := "5", "6"
	cases := []struct {
		name string
		p    *Preconditions
		ok   bool
	}{
		{"nil", nil, true},
		{"uid match", NewUIDPreconditions("uid-1"), true},
		{"uid mismatch", NewUIDPreconditions("uid-2"), false},
		{"rv match", &Preconditions{ResourceVersion: &rv5}, true},
		{"rv mismatch", &Preconditions{ResourceVersion: &rv6}, false},
	}
	for _, tc := range cases {
		err := tc.p.Check("/k", u)
		if tc.ok != (err == nil) {
			t.Errorf("%s: Check = %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrConflict) {
			t.Errorf("%s: error %v is not ErrConflict", tc.name, err)
		}
	}
}
