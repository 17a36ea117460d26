package hub

import (
	"sort"

	"k8s.io/apimachinery/pkg/sharding"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// shardRanges indexes the watchers of one key prefix that select a shard
// by one field (object.metadata.uid or .namespace): their hash ranges,
// sorted by start, so that an event visits only the watchers whose range
// holds its object's hash (interval stabbing), not every shard watcher.
type shardRanges struct {
	ranges []shardRange
	// reach[i] is the farthest-ending range among ranges[:i+1]: a backward
	// scan from the last start <= hash stops where no earlier range
	// reaches the hash.
	reach   []storage.HashRange
	members watcherSet
}

type shardRange struct {
	storage.HashRange
	w *Entry
}

// shardKey returns the field w's shard selector hashes, if it selects a
// shard whose ranges all use one field.
func shardKey(w *Entry) (string, bool) {
	if !w.Pred.Sharded() {
		return "", false
	}
	field, _, ok := storage.ShardHashRanges(w.Pred.Shard)
	return field, ok
}

func (s *shardRanges) add(w *Entry) {
	s.members[w] = struct{}{}
	s.rebuild()
}

func (s *shardRanges) remove(w *Entry) {
	delete(s.members, w)
	s.rebuild()
}

// rebuild recomputes the sorted ranges; watchers join and leave far less
// often than events arrive.
func (s *shardRanges) rebuild() {
	s.ranges = s.ranges[:0]
	for w := range s.members {
		_, rs, _ := storage.ShardHashRanges(w.Pred.Shard)
		for _, r := range rs {
			s.ranges = append(s.ranges, shardRange{HashRange: r, w: w})
		}
	}
	sort.Slice(s.ranges, func(i, j int) bool { return s.ranges[i].Start < s.ranges[j].Start })
	s.reach = s.reach[:0]
	for i, r := range s.ranges {
		if i == 0 || farther(r.HashRange, s.reach[i-1]) {
			s.reach = append(s.reach, r.HashRange)
		} else {
			s.reach = append(s.reach, s.reach[i-1])
		}
	}
}

// farther reports whether a ends after b.
func farther(a, b storage.HashRange) bool { return !b.ToMax && (a.ToMax || a.End > b.End) }

// stab calls visit for every watcher with a range holding hash.
func (s *shardRanges) stab(hash uint64, visit func(*Entry)) {
	i := sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].Start > hash })
	for j := i - 1; j >= 0 && !s.reach[j].Before(hash); j-- {
		if s.ranges[j].Holds(hash) {
			visit(s.ranges[j].w)
		}
	}
}

// shardHash is the hash the shard ranges of field are compared with for
// el's object; false if the field cannot be read.
func shardHash(el *watchcache.Element, field string) (uint64, bool) {
	obj, err := el.Object()
	if err != nil {
		return 0, false
	}
	v, err := sharding.ResolveFieldValue(obj, field)
	if err != nil {
		return 0, false
	}
	return storage.ShardHash(v), true
}
