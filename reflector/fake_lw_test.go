package reflector

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// fakeWatch is a watch whose events the test sends one at a time.
type fakeWatch struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func newFakeWatch() *fakeWatch {
	return &fakeWatch{ch: make(chan watch.Event), stop: make(chan struct{})}
}

func (w *fakeWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *fakeWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }

// send delivers ev, failing the test if the reader stopped the watch or
// never reads it.
func (w *fakeWatch) send(t *testing.T, typ watch.EventType, obj runtime.Object) {
	t.Helper()
	select {
	case w.ch <- watch.Event{Type: typ, Object: obj}:
	case <-w.stop:
		t.Fatalf("watch stopped before %s was delivered", typ)
	case <-time.After(10 * time.Second):
		t.Fatalf("nobody read %s", typ)
	}
}

// end closes the result channel: a normal end of the watch.
func (w *fakeWatch) end() { close(w.ch) }

// waitStopped waits until the reader stops the watch.
func (w *fakeWatch) waitStopped(t *testing.T) {
	t.Helper()
	select {
	case <-w.stop:
	case <-time.After(10 * time.Second):
		t.Fatal("watch was not stopped")
	}
}

// lwCall is one List or Watch call waiting for the test's answer.
type lwCall struct {
	kind  string // "list" or "watch"
	opts  metav1.ListOptions
	list  chan listReply
	watch chan watchReply
}

type listReply struct {
	obj runtime.Object
	err error
}

type watchReply struct {
	w   watch.Interface
	err error
}

// scriptedLW hands every call to the test, which answers it; the test thus
// sees and checks the exact sequence of requests.
type scriptedLW struct {
	calls chan *lwCall
}

func newScriptedLW() *scriptedLW { return &scriptedLW{calls: make(chan *lwCall)} }

func (l *scriptedLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	c := &lwCall{kind: "list", opts: opts, list: make(chan listReply, 1)}
	select {
	case l.calls <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-c.list:
		return r.obj, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *scriptedLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	c := &lwCall{kind: "watch", opts: opts, watch: make(chan watchReply, 1)}
	select {
	case l.calls <- c:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-c.watch:
		return r.w, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// next returns the next call, which must be of the given kind.
func (l *scriptedLW) next(t *testing.T, kind string) *lwCall {
	t.Helper()
	select {
	case c := <-l.calls:
		if c.kind != kind {
			t.Fatalf("got a %s call (%+v), want %s", c.kind, c.opts, kind)
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s call", kind)
	}
	return nil
}

// expectList answers the next call, a list, and returns its options.
func (l *scriptedLW) expectList(t *testing.T, obj runtime.Object, err error) metav1.ListOptions {
	t.Helper()
	c := l.next(t, "list")
	c.list <- listReply{obj, err}
	return c.opts
}

// expectWatch answers the next call, a watch, with a new fakeWatch (or err).
func (l *scriptedLW) expectWatch(t *testing.T, err error) (*fakeWatch, metav1.ListOptions) {
	t.Helper()
	c := l.next(t, "watch")
	if err != nil {
		c.watch <- watchReply{nil, err}
		return nil, c.opts
	}
	w := newFakeWatch()
	c.watch <- watchReply{w, nil}
	return w, c.opts
}

func widgetList(rv, cont string, items ...*widget.Widget) *widget.WidgetList {
	l := &widget.WidgetList{ListMeta: metav1.ListMeta{ResourceVersion: rv, Continue: cont}}
	for _, w := range items {
		l.Items = append(l.Items, *w)
	}
	return l
}

func bookmark(rv string, initialEnd bool) *widget.Widget {
	w := &widget.Widget{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}}
	if initialEnd {
		w.Annotations = map[string]string{metav1.InitialEventsAnnotationKey: "true"}
	}
	return w
}

// recStore records every store call as a line such as "add ns/a@5" or
// "replace 10 [ns/a@3 ns/b@4]".
type recStore struct {
	ops chan string
}

func newRecStore() *recStore { return &recStore{ops: make(chan string, 1000)} }

func objID(w *widget.Widget) string { return w.Namespace + "/" + w.Name + "@" + w.ResourceVersion }

func (s *recStore) Add(w *widget.Widget) error    { s.ops <- "add " + objID(w); return nil }
func (s *recStore) Update(w *widget.Widget) error { s.ops <- "update " + objID(w); return nil }
func (s *recStore) Delete(w *widget.Widget) error { s.ops <- "delete " + objID(w); return nil }
func (s *recStore) Resync() error                 { s.ops <- "resync"; return nil }
func (s *recStore) Replace(l []*widget.Widget, rv string) error {
	ids := make([]string, 0, len(l))
	for _, w := range l {
		ids = append(ids, objID(w))
	}
	s.ops <- fmt.Sprintf("replace %s %v", rv, sorted(ids))
	return nil
}

func (s *recStore) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.ops:
		if got != want {
			t.Fatalf("store op %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no store op, want %q", want)
	}
}

// fastBackoff keeps retry tests quick and deterministic (no jitter).
var fastBackoff = ReflectorConfig[*widget.Widget]{}.Backoff

func init() {
	fastBackoff.Duration, fastBackoff.Factor, fastBackoff.Steps, fastBackoff.Cap = 5*time.Millisecond, 2, 100, time.Second
}

// runReflector starts a reflector over lw and store, stopped at cleanup.
func runReflector(t *testing.T, lw ListerWatcher, store ReflectorStore[*widget.Widget], mod func(*ReflectorConfig[*widget.Widget])) (*Reflector[*widget.Widget], chan error) {
	t.Helper()
	errs := make(chan error, 100)
	cfg := ReflectorConfig[*widget.Widget]{
		ListerWatcher: lw, Store: store, Backoff: fastBackoff, NoFullJitter: true,
		WatchErrorHandler: func(err error) {
			select {
			case errs <- err:
			default:
			}
		},
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := NewReflector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return r, errs
}
