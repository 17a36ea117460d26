package reflector_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"k8s.io/apimachinery/pkg/runtime"
)

// Example runs a shared informer over an etcd store on an embedded etcd
// and prints the events its handler receives.
func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: testapi.Codec,
		NewFunc: testapi.NewWidget, NewListFunc: testapi.NewWidgetList, ResourcePrefix: "/widgets"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// One object exists before the informer starts: it arrives in the initial list.
	_ = store.Create(ctx, "/widgets/default/first", testapi.Make("default", "first", nil), nil, 0)

	lw := reflector.NewStorageListerWatcher(store, "/widgets", testapi.NewWidgetList, "")
	informer, err := reflector.NewSharedIndexInformer[*testapi.Widget](lw)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := make(chan string, 16)
	_, _ = informer.AddEventHandler(reflector.ResourceEventHandlerFuncs[*testapi.Widget]{
		AddFunc: func(w *testapi.Widget, initial bool) {
			events <- fmt.Sprintf("add %s/%s initial=%v", w.Namespace, w.Name, initial)
		},
		UpdateFunc: func(old, w *testapi.Widget) {
			events <- fmt.Sprintf("update %s/%s replicas %d -> %d", w.Namespace, w.Name, old.Spec.Replicas, w.Spec.Replicas)
		},
		DeleteFunc: func(w *testapi.Widget, unknown bool) {
			events <- fmt.Sprintf("delete %s/%s finalStateUnknown=%v", w.Namespace, w.Name, unknown)
		},
	})
	done := make(chan struct{})
	go func() { defer close(done); _ = informer.Run(ctx) }()
	defer func() { cancel(); <-done }()
	reflector.WaitForCacheSync(ctx, informer.HasSynced)
	fmt.Println(<-events)

	_ = store.Create(ctx, "/widgets/default/second", testapi.Make("default", "second", nil), nil, 0)
	fmt.Println(<-events)
	_ = store.GuaranteedUpdate(ctx, "/widgets/default/second", &testapi.Widget{}, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*testapi.Widget).DeepCopy()
			w.Spec.Replicas = 3
			return w, nil, nil
		}, nil)
	fmt.Println(<-events)
	_ = store.Delete(ctx, "/widgets/default/second", &testapi.Widget{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
	fmt.Println(<-events)
	fmt.Println("objects in the informer's store:", len(informer.GetStore().List()))

	// Output:
	// add default/first initial=true
	// add default/second initial=false
	// update default/second replicas 0 -> 3
	// delete default/second finalStateUnknown=false
	// objects in the informer's store: 1
}
