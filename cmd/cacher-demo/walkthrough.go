package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector/httplw"
)

const (
	demoNS       = "default"
	eventTimeout = 10 * time.Second
)

// walkthrough is the scripted tour `cacher-demo` runs with no arguments.
// Every step checks that the system behaved as narrated and returns an
// error otherwise.
type walkthrough struct {
	n   *narrator
	st  *stack
	api *apiClient
	lw  *httplw.ListerWatcher

	// history is every write to demoNS, in order, as a watcher sees it.
	history []change
	// lastSeen is the RV the first watcher saw last before disconnecting.
	lastSeen string
}

func runWalkthrough(ctx context.Context, out, stderr io.Writer) error {
	// The narration is the output: the library's own log lines (the
	// cacher's lists, ...) would interleave with it, so only warnings and
	// errors are logged, to stderr.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	defer slog.SetDefault(prev)
	n := newNarrator(out)
	fmt.Fprintln(out, "listwatch walkthrough: revisions, resume and 410 Gone on a real (embedded) etcd")
	st, err := startStack(ctx, stackConfig{listen: "127.0.0.1:0", bookmarkInterval: time.Second})
	if err != nil {
		return err
	}
	defer st.close()
	n.say("etcd", "embedded etcd at %s (temporary data directory, removed at exit)", st.etcd.Endpoints[0])
	w := &walkthrough{n: n, st: st}
	if err := w.connect(); err != nil {
		return err
	}
	n.say("server", "HTTP API at %s, served by the cacher over one etcd watch on %s", st.baseURL, etcdRoot+keyRoot)
	steps := []struct {
		title string
		run   func(context.Context) error
	}{
		{"Create widgets and list them", w.createAndList},
		{"Watch from the list's RV, then disconnect", w.watchThenDisconnect},
		{"Writes while the watcher is away", w.writeWhileAway},
		{"Resume from the last RV seen: the cache replays exactly what was missed", w.resumeFromCache},
		{"Bookmarks advance an idle watcher's RV", w.bookmarks},
		{"The cacher restarts; a resume older than its first list is served from etcd's history", w.restartAndResume},
		{"etcd compacts past the watcher's RV: 410 Gone, relist, resume", w.compactRelistResume},
		{"Consistent list (RV \"\"): from the cache vs from etcd", w.consistentList},
	}
	for _, s := range steps {
		n.section(s.title)
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("step %q: %w", s.title, err)
		}
	}
	fmt.Fprintln(out, "\nwalkthrough complete: every step behaved as narrated")
	return nil
}

// connect points the walkthrough's clients at the stack's HTTP API.
func (w *walkthrough) connect() error {
	w.api = &apiClient{baseURL: w.st.baseURL, http: &http.Client{Timeout: 30 * time.Second}}
	lw, err := httplw.New(httplw.Config{BaseURL: w.st.baseURL, Group: group, Version: version, Plural: plural, Namespace: demoNS})
	if err != nil {
		return err
	}
	w.lw = lw
	return nil
}

// record notes a write and narrates it.
func (w *walkthrough) record(typ watch.EventType, name, rv string) {
	w.history = append(w.history, change{Type: typ, Name: name, RV: rv})
	w.n.say("write", "%-8s %s/%s -> rv=%s", typ, demoNS, name, rv)
}

// since returns the recorded writes after rv.
func (w *walkthrough) since(rv string) []change {
	for i, c := range w.history {
		if c.RV == rv {
			return append([]change(nil), w.history[i+1:]...)
		}
	}
	return nil
}

// alive counts the widgets in demoNS that the recorded history leaves in place.
func (w *walkthrough) alive() int {
	names := map[string]bool{}
	for _, c := range w.history {
		names[c.Name] = c.Type != watch.Deleted
	}
	n := 0
	for _, ok := range names {
		if ok {
			n++
		}
	}
	return n
}

func (w *walkthrough) createAndList(ctx context.Context) error {
	for i, color := range []string{"red", "green", "blue", "cyan", "amber"} {
		name := fmt.Sprintf("widget-%d", i+1)
		obj, err := w.api.create(ctx, demoNS, name, map[string]any{"color": color})
		if err != nil {
			return err
		}
		w.record(watch.Added, name, obj.GetResourceVersion())
	}
	list, err := w.lw.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	rv := listRV(list)
	w.n.say("list", "GET %s -> %d widgets at list RV %s (a consistent read, served from the cache)", w.api.collectionURL(demoNS), len(items), rv)
	if len(items) != 5 {
		return fmt.Errorf("listed %d widgets, want 5", len(items))
	}
	if last := w.history[len(w.history)-1].RV; rv != last {
		return fmt.Errorf("list RV %s, want the last write's RV %s", rv, last)
	}
	return nil
}

func (w *walkthrough) watchThenDisconnect(ctx context.Context) error {
	from := w.history[len(w.history)-1].RV
	wch, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: from})
	if err != nil {
		return err
	}
	defer wch.Stop()
	w.n.say("watch", "watching %s from RV %s", demoNS, from)
	obj, err := w.api.patch(ctx, demoNS, "widget-1", map[string]any{"color": "violet"})
	if err != nil {
		return err
	}
	w.record(watch.Modified, "widget-1", obj.GetResourceVersion())
	if err := collect(wch, w.history[len(w.history)-1:], eventTimeout, w.sawEvent); err != nil {
		return err
	}
	w.lastSeen = obj.GetResourceVersion()
	w.n.say("watch", "disconnected; last RV seen: %s", w.lastSeen)
	return nil
}

func (w *walkthrough) sawEvent(c change) { w.n.say("event", "%s", c) }

func (w *walkthrough) writeWhileAway(ctx context.Context) error {
	obj, err := w.api.create(ctx, demoNS, "widget-6", map[string]any{"color": "teal"})
	if err != nil {
		return err
	}
	w.record(watch.Added, "widget-6", obj.GetResourceVersion())
	if obj, err = w.api.patch(ctx, demoNS, "widget-2", map[string]any{"color": "lime"}); err != nil {
		return err
	}
	w.record(watch.Modified, "widget-2", obj.GetResourceVersion())
	if _, err = w.api.remove(ctx, demoNS, "widget-3"); err != nil {
		return err
	}
	rv, err := w.st.store.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	w.record(watch.Deleted, "widget-3", fmt.Sprint(rv))
	return nil
}

func (w *walkthrough) resumeFromCache(ctx context.Context) error {
	before := w.st.counted.Counts()
	wch, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: w.lastSeen})
	if err != nil {
		return err
	}
	defer wch.Stop()
	want := w.since(w.lastSeen)
	w.n.say("watch", "resuming from RV %s; %d writes happened meanwhile", w.lastSeen, len(want))
	if err := collect(wch, want, eventTimeout, w.sawEvent); err != nil {
		return err
	}
	d := w.st.counted.Counts().Sub(before)
	reached := d.Gets + d.Lists + d.Watches
	w.n.say("check", "the %d missed events arrived exactly, in order; requests that reached etcd for the resume: %d", len(want), reached)
	if reached != 0 {
		return fmt.Errorf("%d requests reached etcd during the resume, want 0", reached)
	}
	return nil
}

func listRV(list any) string {
	acc, err := meta.ListAccessor(list)
	if err != nil {
		return ""
	}
	return acc.GetResourceVersion()
}
