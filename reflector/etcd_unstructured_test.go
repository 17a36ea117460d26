package reflector

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage/etcd3"
)

func TestEtcdInformerUnstructured(t *testing.T) {
	newEtcdStore(t) // empties the test's prefix
	s, err := etcd3.New(etcd3.Config{Client: etcdServer.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(t), ResourcePrefix: widgetsPrefix})
	must(t, err)
	t.Cleanup(s.Close)
	ctx := testCtx(t)
	must(t, s.Create(ctx, wkey("ns", "a"), widget.NewUnstructuredWidget("ns", "a", map[string]string{"app": "x"}), nil, 0))

	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewUnstructuredList, "ns")
	inf, err := newSharedIndexInformer[*unstructured.Unstructured](lw, WithBackoff(fastBackoff))
	must(t, err)
	must(t, inf.AddIndexers(Indexers[*unstructured.Unstructured]{"app": func(u *unstructured.Unstructured) ([]string, error) {
		return []string{u.GetLabels()["app"]}, nil
	}}))
	added := make(chan string, 10)
	_, err = inf.AddEventHandler(ResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc: func(u *unstructured.Unstructured, _ bool) { added <- u.GetName() },
	})
	must(t, err)
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	must(t, s.Create(ctx, wkey("ns", "b"), widget.NewUnstructuredWidget("ns", "b", map[string]string{"app": "x"}), nil, 0))
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case n := <-added:
			got[n] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("adds so far: %v", got)
		}
	}
	byApp, err := inf.GetIndexer().ByIndex("app", "x")
	must(t, err)
	if len(byApp) != 2 {
		t.Fatalf("index app=x has %d objects", len(byApp))
	}
}
