package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

var widgetsGVR = schema.GroupVersionResource{Group: "widgets.listwatch.dev", Version: "v1", Resource: "widgets"}

func widget(ns, name string, size int64, labels map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "widgets.listwatch.dev/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name, "namespace": ns, "labels": labels},
		"spec":       map[string]any{"size": size},
	}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestClientGo drives the server with client-go's dynamic client: create
// (defaults and status set by the server), get, list by label and field,
// update, server-side apply, watch from a resourceVersion, delete, and bad
// input.
func TestClientGo(t *testing.T) {
	ctx := testCtx(t)
	cli := dynamic.NewForConfigOrDie(startServer(t, server.StorageListwatch))
	ns := "clientgo"
	w := cli.Resource(widgetsGVR).Namespace(ns)

	created, err := w.Create(ctx, widget(ns, "a", 3, map[string]any{"tier": "gold"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(created.Object, "spec", "color"); c != "blue" {
		t.Errorf("defaulted color = %q, want blue", c)
	}
	if p, _, _ := unstructured.NestedString(created.Object, "status", "phase"); p != "Ready" {
		t.Errorf("status.phase = %q, want Ready", p)
	}
	createdRV := created.GetResourceVersion()
	if _, err := w.Create(ctx, widget(ns, "b", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(ctx, widget(ns, "a", 1, nil), metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second create of a: %v, want AlreadyExists", err)
	}
	if _, err := w.Create(ctx, widget(ns, "bad", -1, nil), metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("size -1: %v, want Invalid", err)
	}

	got, err := w.Get(ctx, "a", metav1.GetOptions{})
	if err != nil || got.GetUID() != created.GetUID() {
		t.Fatalf("get a: %v %v", got, err)
	}
	for _, rv := range []string{"", "0"} {
		l, err := w.List(ctx, metav1.ListOptions{LabelSelector: "tier=gold", ResourceVersion: rv})
		if err != nil || len(l.Items) != 1 || l.Items[0].GetName() != "a" {
			t.Fatalf("label list at RV %q: %v %v", rv, l, err)
		}
	}
	l, err := w.List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b"})
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("field list: %v %v", l, err)
	}
	page, err := w.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.GetContinue() == "" {
		t.Fatalf("first page: %v %v", page, err)
	}

	got.Object["spec"].(map[string]any)["size"] = int64(7)
	updated, err := w.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.SetResourceVersion(createdRV)
	if _, err := w.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want Conflict", err)
	}
	applied, err := w.Apply(ctx, "a", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "widgets.listwatch.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "a", "namespace": ns},
		"spec":     map[string]any{"color": "green"},
	}}, metav1.ApplyOptions{FieldManager: "painter", Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if c, _, _ := unstructured.NestedString(applied.Object, "spec", "color"); c != "green" {
		t.Errorf("applied color = %q", c)
	}
	if len(applied.GetManagedFields()) < 2 {
		t.Errorf("managed fields %v, want the creator's and the painter's", applied.GetManagedFields())
	}
	if _, err := w.Patch(ctx, "b", types.MergePatchType, []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	// A watch from the creation's RV sees every later change, in order.
	wi, err := w.Watch(ctx, metav1.ListOptions{ResourceVersion: createdRV})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	if err := w.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"ADDED b", "MODIFIED a", "MODIFIED a", "MODIFIED b", "DELETED b"}
	for i, wantEv := range want {
		select {
		case ev := <-wi.ResultChan():
			o, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("event %d: %v %T", i, ev.Type, ev.Object)
			}
			if got := fmt.Sprintf("%s %s", ev.Type, o.GetName()); got != wantEv {
				t.Fatalf("event %d = %s, want %s", i, got, wantEv)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", wantEv, ctx.Err())
		}
	}
	_ = updated
	if _, err := w.Get(ctx, "b", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get deleted b: %v, want NotFound", err)
	}
}

// TestInformer: a dynamic informer lists, then follows creates, updates and
// deletes.
func TestInformer(t *testing.T) {
	ctx := testCtx(t)
	cli := dynamic.NewForConfigOrDie(startServer(t, server.StorageListwatch))
	ns := "informer"
	w := cli.Resource(widgetsGVR).Namespace(ns)
	if _, err := w.Create(ctx, widget(ns, "pre", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(cli, 0, ns, nil)
	inf := factory.ForResource(widgetsGVR).Informer()
	events := make(chan string, 100)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { events <- "add " + o.(*unstructured.Unstructured).GetName() },
		UpdateFunc: func(_, o any) {
			events <- "update " + o.(*unstructured.Unstructured).GetName()
		},
		DeleteFunc: func(o any) {
			if u, ok := o.(*unstructured.Unstructured); ok {
				events <- "delete " + u.GetName()
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	defer func() { close(stop); factory.Shutdown() }()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	expect := func(want string) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("informer event %q, want %q", got, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %q", want)
		}
	}
	expect("add pre")
	if _, err := w.Create(ctx, widget(ns, "x", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("add x")
	if _, err := w.Patch(ctx, "x", types.MergePatchType, []byte(`{"spec":{"size":9}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("update x")
	if err := w.Delete(ctx, "x", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("delete x")
	if n := len(inf.GetStore().List()); n != 1 {
		t.Errorf("informer holds %d widgets, want 1", n)
	}
}

// TestWatchResumesAcrossRestart: a watch from a resourceVersion older than
// the server's start resumes after the server restarted while etcd moved
// on (Kubernetes' watch cache answers 410 Gone, making every client relist).
func TestWatchResumesAcrossRestart(t *testing.T) {
	ctx := testCtx(t)
	ns := "restart"
	cfg, stop := runServer(t, server.StorageListwatch)
	w1 := dynamic.NewForConfigOrDie(cfg).Resource(widgetsGVR).Namespace(ns)
	first, err := w1.Create(ctx, widget(ns, "before", 1, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	// etcd moves on while no server runs.
	for i := range 20 {
		if _, err := etcd.Client.Put(ctx, fmt.Sprintf("/elsewhere/%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	w2 := dynamic.NewForConfigOrDie(startServer(t, server.StorageListwatch)).Resource(widgetsGVR).Namespace(ns)
	if _, err := w2.Create(ctx, widget(ns, "after", 1, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wi, err := w2.Watch(ctx, metav1.ListOptions{ResourceVersion: first.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer wi.Stop()
	select {
	case ev := <-wi.ResultChan():
		if ev.Type != watch.Added || ev.Object.(*unstructured.Unstructured).GetName() != "after" {
			t.Fatalf("first event after the restart: %v %v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("no event after the restart")
	}
}
