package k8scompat

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/utils/ptr"

	lwstorage "github.com/listwatch/listwatch/storage"
)

var schemaPods = schema.GroupResource{Resource: "pods"}

func TestToListOptionsCopiesEveryField(t *testing.T) {
	called := false
	attrs := func(runtime.Object) (labels.Set, fields.Set, error) { called = true; return nil, nil, nil }
	in := k8sstorage.ListOptions{
		ResourceVersion:      "12",
		ResourceVersionMatch: metav1.ResourceVersionMatchExact,
		Recursive:            true,
		ProgressNotify:       true,
		SendInitialEvents:    ptr.To(true),
		Predicate: k8sstorage.SelectionPredicate{
			Label:               labels.SelectorFromSet(labels.Set{"a": "b"}),
			Field:               fields.OneTermEqualSelector("metadata.name", "x"),
			GetAttrs:            attrs,
			IndexLabels:         []string{"a"},
			IndexFields:         []string{"spec.nodeName"},
			Limit:               7,
			Continue:            "tok",
			AllowWatchBookmarks: true,
		},
	}
	out, err := toListOptions(in)
	if err != nil {
		t.Fatal(err)
	}
	p := out.Predicate
	if out.ResourceVersion != lwstorage.RVAt(12) || out.ResourceVersionMatch != metav1.ResourceVersionMatchExact ||
		!out.Recursive || !out.ProgressNotify || out.SendInitialEvents == nil || !*out.SendInitialEvents {
		t.Fatalf("options not copied: %+v", out)
	}
	if p.Label.String() != "a=b" || p.Field.String() != "metadata.name=x" || p.Limit != 7 || p.Continue != "tok" ||
		!p.AllowWatchBookmarks || len(p.IndexLabels) != 1 || len(p.IndexFields) != 1 {
		t.Fatalf("predicate not copied: %+v", p)
	}
	if _, _, err := p.GetAttrs(nil); err != nil || !called {
		t.Fatal("GetAttrs not passed through")
	}
}

func TestPreconditionsAndCallbacks(t *testing.T) {
	if toPreconditions(nil) != nil {
		t.Fatal("nil preconditions must stay nil")
	}
	uid, rv := types.UID("u"), "5"
	p := toPreconditions(&k8sstorage.Preconditions{UID: &uid, ResourceVersion: &rv})
	if *p.UID != "u" || *p.ResourceVersion != "5" {
		t.Fatalf("preconditions not copied: %+v", p)
	}
	var seen k8sstorage.ResponseMeta
	f := toUpdateFunc(func(in runtime.Object, res k8sstorage.ResponseMeta) (runtime.Object, *uint64, error) {
		seen = res
		return in, nil, errors.New("stop")
	})
	if _, _, err := f(nil, lwstorage.ResponseMeta{TTL: 3, ResourceVersion: 9}); err == nil || err.Error() != "stop" {
		t.Fatalf("update func error not passed through: %v", err)
	}
	if seen.TTL != 3 || seen.ResourceVersion != 9 {
		t.Fatalf("ResponseMeta not converted: %+v", seen)
	}
	v := toValidateFunc(func(context.Context, runtime.Object) error { return errors.New("no") })
	if err := v(context.Background(), nil); err == nil || err.Error() != "no" {
		t.Fatalf("validate func error not passed through: %v", err)
	}
}

func TestVersionerTranslatesParseErrors(t *testing.T) {
	v := versioner{v: lwstorage.APIObjectVersioner{}}
	if n, err := v.ParseResourceVersion("42"); err != nil || n != 42 {
		t.Fatalf("ParseResourceVersion(42) = %d, %v", n, err)
	}
	_, err := v.ParseResourceVersion("abc")
	if !k8sstorage.IsInvalidError(err) {
		t.Fatalf("want storage.InvalidError, got %T %v", err, err)
	}
}

func TestNewRequiresStorage(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Fatal("New without Storage must fail")
	}
}

func TestShardSelectorIsNotIgnoredSilently(t *testing.T) {
	// With the ShardedListAndWatch gate off (the default) a shard selector
	// has no effect in Kubernetes either, so it is accepted.
	if _, err := toPredicate(k8sstorage.SelectionPredicate{}); err != nil {
		t.Fatal(err)
	}
	if !apierrors.IsBadRequest(apiBadRequest(errShardingUnsupported)) {
		t.Fatal("shard rejection must be a 400")
	}
}

// TestMalformedResourceVersionIsBadRequest: the RV is parsed where
// Kubernetes' options enter; a malformed one is 400, for every operation.
func TestMalformedResourceVersionIsBadRequest(t *testing.T) {
	for _, rv := range []string{"abc", "-1", "1.5", "99999999999999999999999"} {
		if _, err := toListOptions(k8sstorage.ListOptions{ResourceVersion: rv}); !apierrors.IsBadRequest(err) {
			t.Errorf("list or watch at RV %q: %v, want 400", rv, err)
		}
		if _, err := toGetOptions(k8sstorage.GetOptions{ResourceVersion: rv}); !apierrors.IsBadRequest(err) {
			t.Errorf("get at RV %q: %v, want 400", rv, err)
		}
	}
	for rv, want := range map[string]lwstorage.RV{"": {}, "0": lwstorage.RVAny, "12": lwstorage.RVAt(12)} {
		if o, err := toGetOptions(k8sstorage.GetOptions{ResourceVersion: rv}); err != nil || o.ResourceVersion != want {
			t.Errorf("get at RV %q: %+v, %v", rv, o.ResourceVersion, err)
		}
	}
}
