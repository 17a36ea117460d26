package reflector_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
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
	store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: widget.Codec,
		NewFunc: widget.New, NewListFunc: widget.NewList, ResourcePrefix: widget.KeyRoot})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// One object exists before the informer starts: it arrives in the initial list.
	_ = store.Create(ctx, widget.Key("default", "first"), widget.NewWidget("default", "first"), nil, 0)

	lw := reflector.NewStorageListerWatcher(store, widget.KeyRoot, widget.NewList, "")
	factory := reflector.NewInformerFactory() // one informer per resource
	informer, err := reflector.InformerFor[*widget.Widget](factory, widget.Resource, lw)
	if err != nil {
		fmt.Println(err)
		return
	}
	events := make(chan string, 16)
	_, _ = informer.AddEventHandler(reflector.ResourceEventHandlerFuncs[*widget.Widget]{
		AddFunc: func(w *widget.Widget, initial bool) {
			events <- fmt.Sprintf("add %s/%s initial=%v", w.Namespace, w.Name, initial)
		},
		UpdateFunc: func(old, w *widget.Widget) {
			events <- fmt.Sprintf("update %s/%s replicas %d -> %d", w.Namespace, w.Name, old.Spec.Replicas, w.Spec.Replicas)
		},
		DeleteFunc: func(w *widget.Widget, unknown bool) {
			events <- fmt.Sprintf("delete %s/%s finalStateUnknown=%v", w.Namespace, w.Name, unknown)
		},
	})
	factory.Start(ctx)
	defer factory.Shutdown()
	reflector.WaitForCacheSync(ctx, informer.HasSynced)
	fmt.Println(<-events)

	_ = store.Create(ctx, widget.Key("default", "second"), widget.NewWidget("default", "second"), nil, 0)
	fmt.Println(<-events)
	_ = store.GuaranteedUpdate(ctx, widget.Key("default", "second"), &widget.Widget{}, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget).DeepCopy()
			w.Spec.Replicas = 3
			return w, nil, nil
		}, nil, storage.UpdateOptions{})
	fmt.Println(<-events)
	_ = store.Delete(ctx, widget.Key("default", "second"), &widget.Widget{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
	fmt.Println(<-events)
	fmt.Println("objects in the informer's store:", len(informer.GetStore().List()))

	// Output:
	// add default/first initial=true
	// add default/second initial=false
	// update default/second replicas 0 -> 3
	// delete default/second finalStateUnknown=false
	// objects in the informer's store: 1
}
