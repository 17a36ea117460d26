package watchcache

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"unique"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// intern replaces obj's labels by an equal shared map, and its namespace,
// apiVersion and kind by canonical copies (see internNames). Objects without
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
	internNames(obj, acc)
	l := acc.GetLabels()
	if len(l) == 0 {
		return
	}
	if shared := in.share(l); !sameMap(shared, l) {
		acc.SetLabels(shared)
	}
}

// share returns the shared map equal to l, recording l as that map when
// there is none yet.
func (in *labelInterner) share(l map[string]string) map[string]string {
	if len(l) == 0 {
		return l
	}
	id := labelSetID(l)
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.sets[id]; ok {
		return shared
	}
	if in.sets == nil || len(in.sets) >= maxInternedLabelSets {
		in.sets = make(map[string]map[string]string)
	}
	in.sets[id] = l
	return l
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// internNames makes obj's namespace, apiVersion and kind, which most
// objects of a resource have in common, canonical copies (unique.Make keeps
// one copy of each while any object uses it).
func internNames(obj runtime.Object, acc metav1.Object) {
	if ns := acc.GetNamespace(); ns != "" {
		acc.SetNamespace(unique.Make(ns).Value())
	}
	if tm, ok := obj.GetObjectKind().(*metav1.TypeMeta); ok {
		if tm.APIVersion != "" {
			tm.APIVersion = unique.Make(tm.APIVersion).Value()
		}
		if tm.Kind != "" {
			tm.Kind = unique.Make(tm.Kind).Value()
		}
	}
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
