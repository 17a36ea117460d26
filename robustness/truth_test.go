package robustness

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/storage/storagetest"
)

// version is one version of an object in etcd's history.
type version struct {
	rev     uint64 // the revision that wrote (or deleted) it
	seq     string
	deleted bool
	labels  labels.Set
}

// truth is etcd's history of the run's keys, indexed for the checks: each
// lookup costs a map access or a binary search, not a scan of the history.
type truth struct {
	byKey      map[string][]version // ascending rev
	bySeq      map[string]version   // the version each write's seq made
	deletedSeq map[string]bool      // key + "#" + seq of every version etcd deleted
	lastDelete map[string]uint64    // the revision of each key's last delete
	keys       []string
}

func newTruth(changes []storagetest.Change) *truth {
	t := &truth{byKey: map[string][]version{}, bySeq: map[string]version{},
		deletedSeq: map[string]bool{}, lastDelete: map[string]uint64{}}
	for _, c := range changes {
		if c.Deleted {
			t.deletedSeq[c.Key+"#"+c.Seq] = true
			t.lastDelete[c.Key] = max(t.lastDelete[c.Key], c.Rev)
		}
		v := version{rev: c.Rev, seq: c.Seq, deleted: c.Deleted, labels: c.Labels}
		if _, ok := t.byKey[c.Key]; !ok {
			t.keys = append(t.keys, c.Key)
		}
		t.byKey[c.Key] = append(t.byKey[c.Key], v)
		if !c.Deleted {
			t.bySeq[c.Seq] = v
		}
	}
	sort.Strings(t.keys)
	return t
}

// at returns key's version current at rev (ok false: absent).
func (t *truth) at(key string, rev uint64) (version, bool) {
	vs := t.byKey[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rev > rev }) - 1
	if i < 0 || vs[i].deleted {
		return version{}, false
	}
	return vs[i], true
}

// next returns the revision of key's first change after rev (0: none).
func (t *truth) next(key string, rev uint64) uint64 {
	vs := t.byKey[key]
	i := sort.Search(len(vs), func(i int) bool { return vs[i].rev > rev })
	if i < len(vs) {
		return vs[i].rev
	}
	return 0
}

// state returns the objects at rev matching selector, by key.
func (t *truth) state(rev uint64, selector string) []item {
	sel, err := labels.Parse(selector)
	if err != nil {
		panic(err)
	}
	var out []item
	for _, k := range t.keys {
		if v, ok := t.at(k, rev); ok && sel.Matches(v.labels) {
			out = append(out, item{Key: k, Seq: v.seq, RV: v.rev})
		}
	}
	return out
}

// diff compares a list's items with etcd's state at rev; "" when equal.
func (t *truth) diff(rev uint64, selector string, got []item) string {
	want := t.state(rev, selector)
	g := slices.Clone(got)
	slices.SortFunc(g, func(a, b item) int { return strings.Compare(a.Key, b.Key) })
	if slices.Equal(g, want) {
		return ""
	}
	wm := map[string]item{}
	for _, w := range want {
		wm[w.Key] = w
	}
	var d []string
	for _, x := range g {
		w, ok := wm[x.Key]
		switch {
		case !ok:
			d = append(d, fmt.Sprintf("%s (seq %s, rv %d) is not in etcd's state", x.Key, x.Seq, x.RV))
		case w != x:
			d = append(d, fmt.Sprintf("%s is seq %s rv %d, etcd had seq %s rv %d", x.Key, x.Seq, x.RV, w.Seq, w.RV))
		}
		delete(wm, x.Key)
	}
	for _, w := range want {
		if _, missing := wm[w.Key]; missing {
			d = append(d, fmt.Sprintf("%s (seq %s, rv %d) is missing", w.Key, w.Seq, w.RV))
		}
	}
	if len(d) == 0 {
		d = append(d, fmt.Sprintf("duplicate items: %v", g))
	}
	if len(d) > 4 {
		d = append(d[:4], fmt.Sprintf("and %d more", len(d)-4))
	}
	return strings.Join(d, "; ")
}

// absentFrom reports whether key was absent at some revision from rev on.
func (t *truth) absentFrom(key string, rev uint64) bool {
	if _, ok := t.at(key, rev); !ok {
		return true
	}
	return t.lastDelete[key] > rev
}

// deletedVersion reports whether etcd deleted key's version seq.
func (t *truth) deletedVersion(key, seq string) bool {
	return t.deletedSeq[key+"#"+seq]
}
