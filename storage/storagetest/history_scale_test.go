package storagetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// A soak's checks judge thousands of watches against a history of a
// hundred thousand changes: each watch must cost its span (the revisions
// from its start to the last one it was told about), not the history.

// synthetic is a made-up history of n changes, one a revision from 1001, over
// 12 keys (each created, updated four times with a label moving between
// groups, deleted, again).
type synthetic struct {
	hist *History
	n    int
}

func newSynthetic(n int) *synthetic {
	s := &synthetic{hist: &History{h: &history{changed: make(chan struct{})}}, n: n}
	const keys = 12
	var last [keys]*truthObject
	for i := range n {
		rev := uint64(1001 + i)
		k := i % keys
		round := i / keys
		grp := "g" + strconv.Itoa(round%3)
		cur := &truthObject{key: "ns/k" + strconv.Itoa(k), seq: strconv.Itoa(i), labels: map[string]string{"grp": grp}}
		te := truthEvent{rev: rev, prev: last[k]}
		switch round % 6 {
		case 0:
			te.created, te.cur = true, cur
		case 5:
			te.deleted = true
		default:
			te.cur = cur
		}
		last[k] = te.cur
		s.hist.h.revs = append(s.hist.h.revs, truthRevision{rev: rev, events: []truthEvent{te}})
	}
	s.hist.h.last = uint64(1000 + n)
	return s
}

// watch returns a correct record of a watch with label selector label from
// start, stopped by its client once told about end: every change due in
// (start, end], then a bookmark at end.
func (s *synthetic) watch(start, end uint64, label string) WatchRecord {
	spec := watchSpec{start: start, label: label, bookmarks: true}
	_, match, err := spec.predicate(storage.DefaultAttrs)
	if err != nil {
		panic(err)
	}
	w := WatchRecord{Start: start, Label: label, Bookmarks: true, Partial: true}
	for _, e := range expectedStream(s.hist.h.revs, start, end, match) {
		w.Events = append(w.Events, watch.Event{Type: e.Type, Object: eventObject(e)})
	}
	bm := widget.NewWidget("", "")
	bm.ResourceVersion = strconv.FormatUint(end, 10)
	w.Events = append(w.Events, watch.Event{Type: watch.Bookmark, Object: bm})
	return w
}

// eventObject is the object a store sends for e.
func eventObject(e expectedEvent) runtime.Object {
	ns, name, _ := strings.Cut(e.Key, "/")
	w := widget.NewWidget(ns, name)
	w.ResourceVersion = strconv.FormatUint(e.RV, 10)
	w.Annotations = map[string]string{seqAnnotation: e.Seq}
	return w
}

// checkSynthetic judges watches watches of span revisions each, spread over
// the history, and each one's resume from its middle; it returns the
// violations.
func checkSynthetic(s *synthetic, watches, span int) []string {
	var out []string
	v := storage.APIObjectVersioner{}
	n := s.n
	labelsOf := []string{"", "grp=g1", "grp!=g0"}
	for i := range watches {
		start := uint64(1000 + (i*7919)%(n-span))
		label := labelsOf[i%len(labelsOf)]
		orig := s.watch(start, start+uint64(span), label)
		from := start + uint64(span/2)
		resumed := s.watch(from, start+uint64(span)+5, label)
		out = append(out, s.hist.CheckWatch(v, nil, orig)...)
		out = append(out, s.hist.CheckResume(v, nil, orig, resumed, from)...)
	}
	return out
}

func TestCheckWatchOnSyntheticHistory(t *testing.T) {
	s := newSynthetic(5000)
	if v := checkSynthetic(s, 200, 100); len(v) != 0 {
		t.Fatalf("correct watches judged violating: %v", v)
	}
	// A watch that misses a change it was due, and a resume that repeats
	// one, are caught.
	w := s.watch(2000, 2100, "")
	w.Events = append(w.Events[:10], w.Events[11:]...)
	if v := s.hist.CheckWatch(storage.APIObjectVersioner{}, nil, w); len(v) == 0 {
		t.Error("a watch missing an event passed")
	}
	orig := s.watch(2000, 2100, "")
	resumed := s.watch(2049, 2100, "")
	if v := s.hist.CheckResume(storage.APIObjectVersioner{}, nil, orig, resumed, 2050); len(v) == 0 {
		t.Error("a resume from 2050 delivering the event at 2050 passed")
	}
	// The span of a watch stopped before anything was due is empty.
	if v := s.hist.CheckWatch(storage.APIObjectVersioner{}, nil, WatchRecord{Start: 6000, Partial: true}); len(v) != 0 {
		t.Errorf("a watch told about nothing, past the history: %v", v)
	}
}

// BenchmarkCheckWatches judges 10,000 watches of 100 revisions each, and
// their resumes, against a history of 100,000 changes (a 30-minute soak's
// scale): each watch costs its span, so this takes seconds; reading the
// whole history per watch took a soak's checks past 47 minutes.
//
//	go test -run '^$' -bench CheckWatches -benchtime 1x ./storage/storagetest
func BenchmarkCheckWatches(b *testing.B) {
	s := newSynthetic(100_000)
	b.ResetTimer()
	for b.Loop() {
		if v := checkSynthetic(s, 10_000, 100); len(v) != 0 {
			b.Fatal(fmt.Sprint(v[:min(len(v), 5)]))
		}
	}
}
