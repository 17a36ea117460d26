package workqueue

import (
	"container/heap"
	"time"
)

// waitEntry is one item waiting to be added at readyAt.
type waitEntry[T comparable] struct {
	item    T
	readyAt time.Time
	index   int // position in the heap, maintained by waitHeap
}

// waitHeap is a min-heap of entries ordered by readyAt, with an index by
// item so that a second AddAfter of the same item finds its entry. It is a
// plain data structure: the delaying queue guards it with its lock.
type waitHeap[T comparable] struct {
	entries []*waitEntry[T]
	byItem  map[T]*waitEntry[T]
}

func newWaitHeap[T comparable]() *waitHeap[T] {
	return &waitHeap[T]{byItem: map[T]*waitEntry[T]{}}
}

// insert schedules item at readyAt, keeping the earlier time when the item
// is already waiting. It reports whether the earliest deadline of the heap
// changed (the waiting goroutine must then re-arm its timer).
func (h *waitHeap[T]) insert(item T, readyAt time.Time) bool {
	if e, ok := h.byItem[item]; ok {
		if !readyAt.Before(e.readyAt) {
			return false
		}
		e.readyAt = readyAt
		heap.Fix((*heapOrder[T])(h), e.index)
		return e.index == 0
	}
	e := &waitEntry[T]{item: item, readyAt: readyAt}
	h.byItem[item] = e
	heap.Push((*heapOrder[T])(h), e)
	return e.index == 0
}

// popReady removes every entry due at now, appending its item to out, and
// returns out and the earliest remaining deadline (ok false when empty).
func (h *waitHeap[T]) popReady(now time.Time, out []T) (ready []T, next time.Time, ok bool) {
	for len(h.entries) > 0 {
		e := h.entries[0]
		if e.readyAt.After(now) {
			return out, e.readyAt, true
		}
		heap.Pop((*heapOrder[T])(h))
		delete(h.byItem, e.item)
		out = append(out, e.item)
	}
	return out, time.Time{}, false
}

// len returns the number of waiting items.
func (h *waitHeap[T]) len() int { return len(h.entries) }

// clear drops every waiting item.
func (h *waitHeap[T]) clear() {
	h.entries = nil
	clear(h.byItem)
}

// heapOrder adapts waitHeap to container/heap.
type heapOrder[T comparable] waitHeap[T]

func (o *heapOrder[T]) Len() int           { return len(o.entries) }
func (o *heapOrder[T]) Less(i, j int) bool { return o.entries[i].readyAt.Before(o.entries[j].readyAt) }
func (o *heapOrder[T]) Swap(i, j int) {
	o.entries[i], o.entries[j] = o.entries[j], o.entries[i]
	o.entries[i].index = i
	o.entries[j].index = j
}
func (o *heapOrder[T]) Push(x any) {
	e := x.(*waitEntry[T])
	e.index = len(o.entries)
	o.entries = append(o.entries, e)
}
func (o *heapOrder[T]) Pop() any {
	n := len(o.entries) - 1
	e := o.entries[n]
	o.entries[n] = nil
	o.entries = o.entries[:n]
	e.index = -1
	return e
}
