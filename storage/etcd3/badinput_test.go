package etcd3

import (
	"context"
	"encoding/base64"
	"errors"
	"math"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func token(json string) string { return base64.RawURLEncoding.EncodeToString([]byte(json)) }

// TestBadInputWritesNothing checks that every malformed request fails with
// a typed error and leaves etcd's revision unchanged.
func TestBadInputWritesNothing(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/existing", testWidget("existing", nil))
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	noop := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		w.Spec.Replicas++
		return w, nil, nil
	}
	list := func(opts storage.ListOptions) error {
		opts.Recursive = true
		return s.GetList(ctx, "/widgets", opts, &widget.WidgetList{})
	}
	create := func(key string) error { return s.Create(ctx, key, testWidget("n", nil), nil, 0) }
	big := testWidget("big", nil)
	big.Spec.Data = strings.Repeat("x", 1700*1024)
	huge := testWidget("huge", nil)
	huge.Spec.Data = strings.Repeat("x", 3<<20)
	withRV := testWidget("rv", nil)
	withRV.ResourceVersion = "5"

	for _, tc := range []struct {
		name string
		call func() error
		want error
	}{
		{"create with RV", func() error { return s.Create(ctx, "/widgets/ns/rv", withRV, nil, 0) }, storage.ErrInvalidArgument},
		{"empty key", func() error { return create("") }, storage.ErrInvalidArgument},
		{"root key", func() error { return create("/") }, storage.ErrInvalidArgument},
		{"outside prefix", func() error { return create("/gadgets/ns/n") }, storage.ErrInvalidArgument},
		{"sibling prefix", func() error { return create("/widgetsX/ns/n") }, storage.ErrInvalidArgument},
		{"dotdot segment", func() error { return create("/widgets/../gadgets/n") }, storage.ErrInvalidArgument},
		{"trailing dotdot", func() error { return create("/widgets/ns/..") }, storage.ErrInvalidArgument},
		{"dot segment", func() error { return create("/widgets/./n") }, storage.ErrInvalidArgument},
		{"the resource prefix itself", func() error { return create("/widgets") }, storage.ErrInvalidArgument},
		{"relative key", func() error { return create("widgets/ns/n") }, storage.ErrInvalidArgument},
		{"get of the resource prefix", func() error {
			return s.Get(ctx, "/widgets", storage.GetOptions{}, &widget.Widget{})
		}, storage.ErrInvalidArgument},
		{"update outside prefix", func() error {
			return s.GuaranteedUpdate(ctx, "/gadgets/x", &widget.Widget{}, true, nil, noop, nil, storage.UpdateOptions{})
		}, storage.ErrInvalidArgument},
		{"delete dotdot", func() error {
			return s.Delete(ctx, "/widgets/ns/../existing", &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{})
		}, storage.ErrInvalidArgument},
		{"get RV beyond any revision", func() error {
			return s.Get(ctx, "/widgets/ns/existing", storage.GetOptions{ResourceVersion: storage.RVAt(1 << 63)}, &widget.Widget{})
		}, storage.ErrTooLargeResourceVersion},
		{"list RV beyond any revision", func() error { return list(storage.ListOptions{ResourceVersion: storage.RVAt(math.MaxUint64)}) }, storage.ErrTooLargeResourceVersion},
		{"list unknown match", func() error {
			return list(storage.ListOptions{ResourceVersion: storage.RVAt(1), ResourceVersionMatch: "Sometimes"})
		}, storage.ErrInvalidArgument},
		{"list exact 0", func() error {
			return list(storage.ListOptions{ResourceVersion: storage.RVAny, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		}, storage.ErrInvalidArgument},
		{"continue not base64", func() error {
			return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1, Continue: "%%%"}})
		}, storage.ErrInvalidArgument},
		{"continue not json", func() error {
			return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1, Continue: token("nope")}})
		}, storage.ErrInvalidArgument},
		{"continue wrong version", func() error {
			return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1, Continue: token(`{"v":"x","rv":1,"start":"a"}`)}})
		}, storage.ErrInvalidArgument},
		{"continue rv 0", func() error {
			return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1, Continue: token(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`)}})
		}, storage.ErrInvalidArgument},
		{"continue path traversal", func() error {
			return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 1, Continue: token(`{"v":"meta.k8s.io/v1","rv":1,"start":"../../x"}`)}})
		}, storage.ErrInvalidArgument},
		{"negative limit", func() error { return list(storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: -1}}) }, storage.ErrInvalidArgument},
		{"watch RV beyond any revision", func() error {
			_, err := s.Watch(ctx, "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(1 << 63), Recursive: true})
			return err
		}, storage.ErrTooLargeResourceVersion},
		{"watch outside prefix", func() error {
			_, err := s.Watch(ctx, "/gadgets", storage.ListOptions{Recursive: true})
			return err
		}, storage.ErrInvalidArgument},
		{"object above etcd's request limit", func() error { return s.Create(ctx, "/widgets/ns/big", big, nil, 0) }, storage.ErrRequestTooLarge},
		{"object above the client's message limit", func() error { return s.Create(ctx, "/widgets/ns/huge", huge, nil, 0) }, storage.ErrRequestTooLarge},
		{"cancelled create", func() error { return s.Create(cancelled, "/widgets/ns/c", testWidget("c", nil), nil, 0) }, context.Canceled},
		{"cancelled update", func() error {
			return s.GuaranteedUpdate(cancelled, "/widgets/ns/existing", &widget.Widget{}, false, nil, noop, nil, storage.UpdateOptions{})
		}, context.Canceled},
		{"cancelled delete", func() error {
			return s.Delete(cancelled, "/widgets/ns/existing", &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{})
		}, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := currentRev(t)
			err := tc.call()
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if after := currentRev(t); after != before {
				t.Fatalf("etcd revision moved %d -> %d: something was written", before, after)
			}
		})
	}
	if n := rawCount(t, s); n != 1 {
		t.Fatalf("%d keys under the prefix, want 1", n)
	}
}

// TestKeyErrorWording checks the words Kubernetes' suite matches on.
func TestKeyErrorWording(t *testing.T) {
	s := newTestStore(t)
	for key, want := range map[string]string{
		"":            "empty key",
		"/":           "empty key",
		"/gadgets/x":  "lacks resource prefix",
		"/widgets":    "lacks resource prefix",
		"/widgets/..": "invalid key",
	} {
		err := s.Get(testCtx(t), key, storage.GetOptions{}, &widget.Widget{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Get(%q): %v, want an error containing %q", key, err, want)
		}
	}
	// Recursive operations may name the resource prefix itself.
	if err := s.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true}, &widget.WidgetList{}); err != nil {
		t.Fatal(err)
	}
}
