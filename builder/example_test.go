package builder_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
)

// reconciler gives each Widget Spec.Replicas Parts that it owns, and
// reports them in Status.ReadyReplicas.
type reconciler struct{ c client.Client }

func (r reconciler) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	var w widget.Widget
	if err := r.c.Get(ctx, req.NamespacedName, &w); err != nil {
		return controller.Result{}, client.IgnoreNotFound(err)
	}
	for i := range w.Spec.Replicas {
		p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: fmt.Sprint(w.Name, "-", i)}}
		if err := client.SetControllerReference(&w, p, r.c.Kinds()); err != nil {
			return controller.Result{}, err
		}
		if err := r.c.Create(ctx, p); client.IgnoreAlreadyExists(err) != nil {
			return controller.Result{}, err
		}
	}
	w.Status.ReadyReplicas = w.Spec.Replicas
	return controller.Result{}, r.c.Status().Update(ctx, &w) // a conflict is logged and retried
}

// run is the controller program's main: an embedded etcd, a manager with
// leader election that owns the storage and caches, and the controller.
// It hands the manager's client to the caller once the controller is set.
func run(ctx context.Context, ready chan<- client.Client) error {
	etcd, err := etcdrun.StartServer(etcdrun.ServerConfig{ClientURLs: []string{"http://127.0.0.1:0"}, PeerURLs: []string{"http://127.0.0.1:0"}})
	if err != nil {
		return err
	}
	defer etcd.Close()
	etcdClient, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: etcd.Endpoints})
	if err != nil {
		return err
	}
	defer etcdClient.Close()
	kinds, _ := client.NewKinds(widget.Scheme)
	m, err := manager.New(manager.Options{Name: "widgets", Kinds: kinds, Etcd: etcdClient, LeaderElection: &manager.LeaderElection{Key: "/leader/widgets"}})
	if err != nil {
		return err
	}
	if err := builder.ControllerManagedBy(m).For(&widget.Widget{}).Owns(&widget.Part{}).Complete(reconciler{m.GetClient()}); err != nil {
		return err
	}
	ready <- m.GetClient()
	return m.Run(ctx)
}

// Example: a Widget controller that owns Parts, under leader election, on
// an embedded etcd. A user (or kubectl) creates a Widget; the controller
// creates its Parts and reports them in the Widget's status.
func Example() {
	ctx, stop := context.WithTimeout(context.Background(), time.Minute)
	defer stop()
	ready, done := make(chan client.Client), make(chan error)
	go func() { done <- run(ctx, ready) }()
	c := <-ready

	w := widget.NewWidget("default", "w1")
	w.Spec.Replicas = 2
	if err := c.Create(ctx, w); err != nil {
		panic(err)
	}
	for w.Status.ReadyReplicas != 2 {
		time.Sleep(50 * time.Millisecond)
		if err := c.Get(ctx, client.KeyOf(w), w, client.FromStorage); err != nil {
			panic(err)
		}
	}
	var parts widget.PartList
	if err := c.List(ctx, &parts, client.InNamespace("default"), client.FromStorage); err != nil {
		panic(err)
	}
	for _, p := range parts.Items {
		fmt.Println(p.Name, "owned by", client.ControllerOf(&p).Name)
	}
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// w1-0 owned by w1
	// w1-1 owned by w1
	// stopped: <nil>
}
