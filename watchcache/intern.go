package watchcache

import (
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// maxInternedLabelSets bounds the label-set table; when it is full it
// starts over (objects keep the maps they have).
const maxInternedLabelSets = 4096

// labelInterner makes objects with equal labels share one map. Objects of
// one workload usually carry one of a few label sets, and a small map costs
// about 300 bytes, a third of a 1 KiB object. Sharing is invisible to
// readers: cached objects are read-only (see the package doc). Safe for
// concurrent use.
type labelInterner struct {
	mu   sync.Mutex
	sets map[string]map[string]string
}

// intern replaces obj's labels by an equal shared map. Objects without
// typed metadata (such as Unstructured, whose labels are rebuilt on every
// read) are left alone.
func (in *labelInterner) intern(obj runtime.Object) {
	if _, ok := obj.(*unstructured.Unstructured); ok {
		return
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	l := acc.GetLabels()
	if len(l) == 0 {
		return
	}
	id := labelSetID(l)
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.sets[id]; ok {
		acc.SetLabels(shared)
		return
	}
	if in.sets == nil || len(in.sets) >= maxInternedLabelSets {
		in.sets = make(map[string]map[string]string)
	}
	in.sets[id] = l
}

// labelSetID is a canonical encoding of l: sorted name=value pairs, NUL
// separated (label names and values cannot contain NUL).
func labelSetID(l map[string]string) string {
	names := make([]string, 0, len(l))
	n := 0
	for k, v := range l {
		names = append(names, k)
		n += len(k) + len(v) + 2
	}
	slices.Sort(names)
	var b strings.Builder
	b.Grow(n)
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(l[k])
		b.WriteByte(0)
	}
	return b.String()
}
