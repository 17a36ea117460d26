package storagetest

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// This file holds the helpers that read watch streams with deadlines.

// watcher wraps a watch.Interface with reads that fail the case on timeout.
type watcher struct {
	t *testing.T
	w watch.Interface
}

// mustWatch starts a watch and stops it when the case ends.
func (e *Env) mustWatch(t *testing.T, key string, opts storage.ListOptions) *watcher {
	t.Helper()
	w, err := e.Store.Watch(ctx(t), key, opts)
	if err != nil {
		t.Fatalf("Watch %s %+v: %v", key, opts, err)
	}
	t.Cleanup(w.Stop)
	return &watcher{t: t, w: w}
}

// next returns the next event of any type, failing when none arrives in
// time or the channel closes.
func (w *watcher) next() watch.Event {
	w.t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	select {
	case ev, ok := <-w.w.ResultChan():
		if !ok {
			w.t.Fatal("watch channel closed while an event was expected")
		}
		return ev
	case <-timer.C:
		w.t.Fatalf("no watch event within %v", waitTimeout)
	}
	return watch.Event{}
}

// nextObject returns the next event that is not a BOOKMARK.
func (w *watcher) nextObject() watch.Event {
	w.t.Helper()
	for {
		ev := w.next()
		if ev.Type != watch.Bookmark {
			return ev
		}
	}
}

// expect reads the next non-bookmark event and checks its type and object
// name; it returns the event.
func (w *watcher) expect(typ watch.EventType, ns, name string) watch.Event {
	w.t.Helper()
	ev := w.nextObject()
	checkEvent(w.t, ev, typ, ns, name)
	return ev
}

// checkEvent fails t unless ev has the given type and names ns/name.
func checkEvent(t *testing.T, ev watch.Event, typ watch.EventType, ns, name string) {
	t.Helper()
	if ev.Type == watch.Error {
		t.Fatalf("got ERROR event %s, want %s %s/%s", statusOf(ev), typ, ns, name)
	}
	acc := accessor(t, ev.Object)
	if ev.Type != typ || acc.GetNamespace() != ns || acc.GetName() != name {
		t.Fatalf("got %s %s, want %s %s/%s", ev.Type, describe(ev.Object), typ, ns, name)
	}
}

// expectNone fails when an event other than a BOOKMARK arrives within quietWindow.
func (w *watcher) expectNone() {
	w.t.Helper()
	timer := time.NewTimer(quietWindow)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				w.t.Fatal("watch channel closed unexpectedly")
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error {
				w.t.Fatalf("unexpected ERROR event %s", statusOf(ev))
			}
			w.t.Fatalf("unexpected event %s %s", ev.Type, describe(ev.Object))
		case <-timer.C:
			return
		}
	}
}

// expectClosed waits until the channel closes and returns the events
// received meanwhile.
func (w *watcher) expectClosed() []watch.Event {
	w.t.Helper()
	return drainUntilClosed(w.t, w.w)
}

func drainUntilClosed(t *testing.T, w watch.Interface) []watch.Event {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	var got []watch.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-timer.C:
			t.Fatalf("watch channel not closed within %v (got %d events meanwhile)", waitTimeout, len(got))
		}
	}
}

// statusOf describes the *metav1.Status of an ERROR event.
func statusOf(ev watch.Event) string {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return fmt.Sprintf("status code %d reason %q: %s", st.Code, st.Reason, st.Message)
	}
	return fmt.Sprintf("object %T", ev.Object)
}

// isBookmark reports whether ev is a BOOKMARK.
func isBookmark(ev watch.Event) bool { return ev.Type == watch.Bookmark }

// isInitialEventsEnd reports whether ev is the BOOKMARK that ends the initial events.
func isInitialEventsEnd(t *testing.T, ev watch.Event) bool {
	t.Helper()
	return ev.Type == watch.Bookmark &&
		accessor(t, ev.Object).GetAnnotations()[storage.InitialEventsAnnotationKey] == "true"
}

func ptr[T any](v T) *T { return &v }
