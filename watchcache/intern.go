package watchcache

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// maxInternedLabelSets bounds the label-set table; when it is full it
// starts over (objects keep the maps they have).
const maxInternedLabelSets = 4096

// labelInterner makes encoded elements with equal label sets share one
// map. Objects of one workload usually carry one of a few label sets, and a
// small map costs about 300 bytes, a third of a 1 KiB object. Sharing is
// invisible to readers: cached label sets are read-only. Safe for
// concurrent use. (Decoded objects are shared by the compactor.)
type labelInterner struct {
	mu   sync.Mutex
	sets map[string]map[string]string
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
