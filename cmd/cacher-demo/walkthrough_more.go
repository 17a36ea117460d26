package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/storage"
)

func (w *walkthrough) bookmarks(ctx context.Context) error {
	idle, err := httplw.New(httplw.Config{BaseURL: w.st.baseURL, Group: group, Version: version, Plural: plural, Namespace: "idle"})
	if err != nil {
		return err
	}
	from := w.history[len(w.history)-1].RV
	wch, err := idle.Watch(ctx, metav1.ListOptions{ResourceVersion: from, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer wch.Stop()
	w.n.say("watch", "watching the empty namespace \"idle\" from RV %s with allowWatchBookmarks=true", from)
	obj, err := w.api.create(ctx, demoNS, "widget-7", map[string]any{"color": "plum"})
	if err != nil {
		return err
	}
	w.record(watch.Added, "widget-7", obj.GetResourceVersion())
	target, _ := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	deadline := time.Now().Add(eventTimeout)
	for time.Now().Before(deadline) {
		ev, err := nextEvent(wch, time.Until(deadline))
		if err != nil {
			return err
		}
		if ev.Type != watch.Bookmark {
			return fmt.Errorf("idle watcher got a %s event", ev.Type)
		}
		rv, _ := strconv.ParseInt(objectRV(ev.Object), 10, 64)
		w.n.say("bookmark", "BOOKMARK rv=%d: nothing in \"idle\" up to RV %d, so a resume can start there", rv, rv)
		if rv >= target {
			return nil
		}
	}
	return fmt.Errorf("no bookmark reached RV %d within %v", target, eventTimeout)
}

func (w *walkthrough) restartAndResume(ctx context.Context) error {
	w.n.say("restart", "stopping the HTTP server and the cacher (like an API server restart)")
	w.st.cancelServe()
	<-w.st.serveDone
	if err := w.st.stopCacher(); err != nil {
		return err
	}
	obj := newWidgetObject(demoNS, "widget-8")
	out := &unstructured.Unstructured{}
	if err := w.st.store.Create(ctx, keyRoot+"/"+demoNS+"/widget-8", obj, out, 0); err != nil {
		return err
	}
	w.n.say("etcd", "meanwhile another replica writes straight to etcd:")
	w.record(watch.Added, "widget-8", out.GetResourceVersion())
	if err := w.st.startCacher(ctx, stackConfig{bookmarkInterval: time.Second}); err != nil {
		return err
	}
	if err := w.st.startHTTP("127.0.0.1:0", nil); err != nil {
		return err
	}
	if err := w.connect(); err != nil {
		return err
	}
	list, err := w.lw.List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	w.n.say("restart", "new cacher ready at %s; its cache starts at RV %s", w.st.baseURL, listRV(list))
	return w.resumeAcrossRestart(ctx)
}

func (w *walkthrough) resumeAcrossRestart(ctx context.Context) error {
	watchesBefore := w.st.counted.Counts().Watches
	wch, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: w.lastSeen})
	if err != nil {
		return err
	}
	defer wch.Stop()
	want := w.since(w.lastSeen)
	w.n.say("watch", "resuming from RV %s, older than the new cache: %d events to replay", w.lastSeen, len(want))
	if err := collect(wch, want, eventTimeout, w.sawEvent); err != nil {
		return err
	}
	obj, err := w.api.create(ctx, demoNS, "widget-9", map[string]any{"color": "gold"})
	if err != nil {
		return err
	}
	w.record(watch.Added, "widget-9", obj.GetResourceVersion())
	if err := collect(wch, w.history[len(w.history)-1:], eventTimeout, w.sawEvent); err != nil {
		return err
	}
	streams := w.st.counted.Counts().Watches - watchesBefore
	w.n.say("check", "no 410: etcd's history filled the gap (%d catch-up watch on etcd), then the same stream continued live from the cache", streams)
	if streams < 1 {
		return fmt.Errorf("the resume did not use etcd's history (catch-up streams: %d)", streams)
	}
	return nil
}

func (w *walkthrough) compactRelistResume(ctx context.Context) error {
	rev, err := w.st.store.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	if err := w.st.compact(ctx, int64(rev)); err != nil {
		return err
	}
	w.n.say("etcd", "compacted etcd's history up to RV %d", rev)
	wch, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: w.lastSeen})
	if err != nil {
		return err
	}
	ev, err := nextEvent(wch, eventTimeout)
	wch.Stop()
	if err != nil {
		return err
	}
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 410 {
		return fmt.Errorf("resume from compacted RV %s gave %s %T, want ERROR 410", w.lastSeen, ev.Type, ev.Object)
	}
	w.n.say("watch", "resume from RV %s -> ERROR %d %s: %s", w.lastSeen, st.Code, st.Reason, st.Message)
	return w.relistAndResume(ctx)
}

func (w *walkthrough) relistAndResume(ctx context.Context) error {
	list, err := w.lw.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return err
	}
	rv := listRV(list)
	w.n.say("list", "relist -> %d widgets at RV %s", len(items), rv)
	if want := w.alive(); len(items) != want {
		return fmt.Errorf("relist has %d widgets, want %d", len(items), want)
	}
	wch, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		return err
	}
	defer wch.Stop()
	w.n.say("watch", "watching again from RV %s", rv)
	obj, err := w.api.create(ctx, demoNS, "widget-10", map[string]any{"color": "navy"})
	if err != nil {
		return err
	}
	w.record(watch.Added, "widget-10", obj.GetResourceVersion())
	return collect(wch, w.history[len(w.history)-1:], eventTimeout, w.sawEvent)
}

const bulkObjects = 2000

func (w *walkthrough) consistentList(ctx context.Context) error {
	if err := w.loadBulk(ctx); err != nil {
		return err
	}
	opts := storage.ListOptions{Recursive: true, Predicate: storage.Everything}
	cacheTime, cacheN, cacheRV, err := timeList(ctx, w.st.cacher, opts)
	if err != nil {
		return err
	}
	listsBefore := w.st.counted.Counts().Lists
	if _, _, _, err := timeList(ctx, w.st.cacher, opts); err != nil {
		return err
	}
	fromEtcd := w.st.counted.Counts().Lists - listsBefore
	etcdTime, etcdN, etcdRV, err := timeList(ctx, w.st.store, opts)
	if err != nil {
		return err
	}
	w.n.say("list", "cache: %d widgets at RV %s in %v (median of 5; list requests to etcd: %d)", cacheN, cacheRV, cacheTime, fromEtcd)
	w.n.say("list", "etcd:  %d widgets at RV %s in %v (median of 5)", etcdN, etcdRV, etcdTime)
	w.n.say("check", "same objects at the same RV; the cache answered %.1fx faster", float64(etcdTime)/float64(max(cacheTime, 1)))
	if cacheN != etcdN || cacheRV != etcdRV {
		return fmt.Errorf("cache listed %d at RV %s, etcd %d at RV %s", cacheN, cacheRV, etcdN, etcdRV)
	}
	if fromEtcd != 0 {
		return fmt.Errorf("the consistent list from the cache sent %d list requests to etcd", fromEtcd)
	}
	return nil
}

// loadBulk creates bulkObjects widgets in namespace "bulk" straight in etcd.
func (w *walkthrough) loadBulk(ctx context.Context) error {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < bulkObjects; i += 16 {
				obj := newWidgetObject("bulk", fmt.Sprintf("bulk-%05d", i))
				if err := w.st.store.Create(ctx, keyRoot+"/bulk/"+obj.GetName(), obj, nil, 0); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	w.n.say("write", "created %d widgets in namespace \"bulk\" in %v", bulkObjects, time.Since(start).Round(time.Millisecond))
	return nil
}

// timeList lists everything with RV "" five times and returns the median
// duration, the item count and the list RV.
func timeList(ctx context.Context, s storage.Interface, opts storage.ListOptions) (time.Duration, int, string, error) {
	var times []time.Duration
	var n int
	var rv string
	for i := 0; i < 5; i++ {
		list := &unstructured.UnstructuredList{}
		start := time.Now()
		if err := s.GetList(ctx, keyRoot, opts, list); err != nil {
			return 0, 0, "", err
		}
		times = append(times, time.Since(start))
		n, rv = len(list.Items), list.GetResourceVersion()
	}
	slices.Sort(times)
	return times[len(times)/2].Round(10 * time.Microsecond), n, rv, nil
}

func objectRV(obj any) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetResourceVersion()
}

// newWidgetObject returns an empty Widget named ns/name.
func newWidgetObject(ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetAPIVersion(group + "/" + version)
	obj.SetKind(kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}
