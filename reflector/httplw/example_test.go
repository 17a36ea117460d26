package httplw_test

import (
	"context"
	"fmt"
	"log"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
)

// An informer in one process over the HTTP API of another.
func Example() {
	lw, err := httplw.New(httplw.Config{
		BaseURL: "http://127.0.0.1:8080",
		Group:   "demo.listwatch.dev", Version: "v1", Plural: "widgets",
		Namespace: "default",
	})
	if err != nil {
		log.Fatal(err)
	}
	factory := reflector.NewInformerFactory() // one informer per resource
	widgets := schema.GroupVersionResource{Group: "demo.listwatch.dev", Version: "v1", Resource: "widgets"}
	inf, err := reflector.InformerFor[*unstructured.Unstructured](factory, widgets, lw)
	if err != nil {
		log.Fatal(err)
	}
	_, _ = inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(u *unstructured.Unstructured, _ bool) {
			fmt.Println("added", u.GetName(), "at", u.GetResourceVersion())
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx)
	defer factory.Shutdown()
	reflector.WaitForCacheSync(ctx, inf.HasSynced)
}

// List one page and watch from the list's resource version.
func ExampleListerWatcher_Watch() {
	lw, err := httplw.New(httplw.Config{BaseURL: "http://127.0.0.1:8080",
		Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	list, err := lw.List(ctx, metav1.ListOptions{Limit: 500})
	if err != nil {
		log.Fatal(err)
	}
	rv := list.(*unstructured.UnstructuredList).GetResourceVersion()
	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		fmt.Println(ev.Type)
	}
}

// The query a watch sends.
func ExampleEncodeListOptions() {
	q := httplw.EncodeListOptions(metav1.ListOptions{
		Watch: true, ResourceVersion: "42", AllowWatchBookmarks: true, LabelSelector: "app=web",
	})
	fmt.Println(q.Encode())
	// Output: allowWatchBookmarks=true&labelSelector=app%3Dweb&resourceVersion=42&watch=true
}
