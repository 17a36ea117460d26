package storage

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestListOptionsFrom: a list keeps its page options, a watch drops them
// and keeps sendInitialEvents; selectors, shard and attrs reach the
// predicate; the request is always recursive.
func TestListOptionsFrom(t *testing.T) {
	yes := true
	list, err := ListOptionsFrom(metav1.ListOptions{ResourceVersion: "0", Limit: 5, Continue: "",
		LabelSelector: "app=a", FieldSelector: "metadata.name=x", AllowWatchBookmarks: true}, DefaultAttrs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !list.Recursive || list.Predicate.Limit != 5 || list.Predicate.Label.String() != "app=a" ||
		list.Predicate.Field.String() != "metadata.name=x" || list.Predicate.GetAttrs == nil || list.ProgressNotify {
		t.Fatalf("list options: %+v", list)
	}
	w, err := ListOptionsFrom(metav1.ListOptions{Watch: true, ResourceVersion: "7", Limit: 5, Continue: "c",
		AllowWatchBookmarks: true, SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		ShardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w.Predicate.Limit != 0 || w.Predicate.Continue != "" || w.SendInitialEvents == nil || !*w.SendInitialEvents ||
		!w.Predicate.AllowWatchBookmarks || w.Predicate.Shard == nil || w.ResourceVersion != RVAt(7) {
		t.Fatalf("watch options: %+v", w)
	}
}

// TestListOptionsFromValidates: Kubernetes' rules: malformed values are
// 400, combinations it forbids are 422 Invalid ListOptions.
func TestListOptionsFromValidates(t *testing.T) {
	yes := true
	onlyName := func(f string) bool { return f == "metadata.name" }
	for name, tc := range map[string]struct {
		o    metav1.ListOptions
		code int32
	}{
		"label":                 {metav1.ListOptions{LabelSelector: "a in ("}, 400},
		"field":                 {metav1.ListOptions{FieldSelector: "a=="}, 400},
		"not selectable":        {metav1.ListOptions{FieldSelector: "spec.x=1"}, 400},
		"shard":                 {metav1.ListOptions{ShardSelector: "nope("}, 400},
		"malformed rv":          {metav1.ListOptions{ResourceVersion: "x"}, 400},
		"negative rv watch":     {metav1.ListOptions{Watch: true, ResourceVersion: "-3"}, 400},
		"exact without rv":      {metav1.ListOptions{ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 422},
		"exact at 0":            {metav1.ListOptions{ResourceVersion: "0", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, 422},
		"unknown match":         {metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: "Bogus"}, 422},
		"match with continue":   {metav1.ListOptions{ResourceVersion: "1", Continue: "c", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, 422},
		"rv with continue":      {metav1.ListOptions{ResourceVersion: "5", Continue: "c"}, 422},
		"initial events list":   {metav1.ListOptions{SendInitialEvents: &yes}, 422},
		"initial no bookmarks":  {metav1.ListOptions{Watch: true, SendInitialEvents: &yes, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, 422},
		"initial without match": {metav1.ListOptions{Watch: true, SendInitialEvents: &yes, AllowWatchBookmarks: true}, 422},
		"watch with match":      {metav1.ListOptions{Watch: true, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, 422},
		"continue at 0":         {metav1.ListOptions{ResourceVersion: "0", Continue: "c"}, 0},
		"plain watch":           {metav1.ListOptions{Watch: true, ResourceVersion: "3", FieldSelector: "metadata.name=a"}, 0},
	} {
		_, err := ListOptionsFrom(tc.o, nil, onlyName)
		var got int32
		if err != nil {
			got = -1
			if e, ok := err.(*Error); ok {
				got = e.Status().Code
			}
		}
		if got != tc.code {
			t.Errorf("%s: code %d (%v), want %d", name, got, err, tc.code)
		}
	}
}
