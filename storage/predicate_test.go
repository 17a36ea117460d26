package storage

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func TestSelectionPredicate(t *testing.T) {
	obj := &unstructured.Unstructured{}
	obj.SetNamespace("ns1")
	obj.SetName("a")
	obj.SetLabels(map[string]string{"app": "web"})
	cases := []struct {
		name  string
		p     SelectionPredicate
		match bool
	}{
		{"zero value matches all", SelectionPredicate{}, true},
		{"everything", Everything, true},
		{"label match", SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "web"})}, true},
		{"label miss", SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "db"})}, false},
		{"name field", SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.name", "a")}, true},
		{"namespace field miss", SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.namespace", "ns2")}, false},
	}
	for _, tc := range cases {
		got, err := tc.p.Matches(obj)
		if err != nil || got != tc.match {
			t.Errorf("%s: Matches = %v, %v; want %v", tc.name, got, err, tc.match)
		}
	}
	p := SelectionPredicate{Field: fields.AndSelectors(
		fields.OneTermEqualSelector("metadata.name", "a"), fields.OneTermEqualSelector("metadata.namespace", "ns1"))}
	if name, ok := p.MatchesSingle(); !ok || name != "a" {
		t.Errorf("MatchesSingle = %q, %v", name, ok)
	}
	if ns, ok := p.MatchesSingleNamespace(); !ok || ns != "ns1" {
		t.Errorf("MatchesSingleNamespace = %q, %v", ns, ok)
	}
	if _, ok := (&SelectionPredicate{}).MatchesSingle(); ok {
		t.Error("empty predicate claims a single name")
	}
}
