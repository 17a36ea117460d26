package reflector

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/examples/widget"
)

func TestInformerFactoryOneInformerPerResource(t *testing.T) {
	s := newEtcdStore(t)
	create(t, s, "ns", "a")
	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "")
	widgets := widget.GroupVersion.WithResource("widgets")
	other := schema.GroupVersionResource{Group: "x", Version: "v1", Resource: "others"}

	f := NewInformerFactory(WithBackoff(fastBackoff))
	inf1, err := InformerFor[*widget.Widget](f, widgets, lw)
	must(t, err)
	inf2, err := InformerFor[*widget.Widget](f, widgets, nil)
	must(t, err)
	if inf1 != inf2 {
		t.Fatal("two informers for one resource")
	}
	if _, err := InformerFor[*unstructured.Unstructured](f, widgets, lw); !errors.Is(err, ErrInformerTypeMismatch) {
		t.Fatalf("type mismatch error = %v", err)
	}
	_, err = InformerFor[*widget.Widget](f, other, NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "ns"))
	must(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f.Start(ctx)
	f.Start(ctx) // idempotent
	synced := f.WaitForCacheSync(ctx)
	if len(synced) != 2 || !synced[widgets] || !synced[other] {
		t.Fatalf("WaitForCacheSync = %v", synced)
	}
	if _, ok := inf1.GetStore().GetByKey("ns/a"); !ok {
		t.Fatal("factory informer has not listed")
	}
	f.Shutdown() // waits: goleak in TestMain checks nothing is left
	if !inf1.IsStopped() {
		t.Fatal("informer still running after Shutdown")
	}
	if _, err := InformerFor[*widget.Widget](f, other, lw); !errors.Is(err, ErrFactoryShutDown) {
		t.Fatalf("InformerFor after Shutdown = %v", err)
	}
}
