package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// takeAll runs one pass of q at now, marking every node done, and returns
// the nodes taken.
func takeAll(q *zoneQueue, now time.Time) []string {
	var got []string
	q.try(now, func(n string) (bool, time.Duration) { got = append(got, n); return true, 0 })
	return got
}

// TestZoneQueueRate: on a fake timeline, a queue at 2 nodes/s with burst 1
// hands out one node at once and then one per 500 ms in FIFO order, each
// node once; a rate of 0 hands out nothing however long one waits; raising
// it again resumes; removed nodes are skipped.
func TestZoneQueueRate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newZoneQueue(2)
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		require.True(t, q.add(n))
	}
	require.False(t, q.add("n1"))
	require.Equal(t, []string{"n1"}, takeAll(q, t0))
	require.Empty(t, takeAll(q, t0.Add(400*time.Millisecond)))
	require.Equal(t, []string{"n2"}, takeAll(q, t0.Add(500*time.Millisecond)))
	require.Equal(t, []string{"n3"}, takeAll(q, t0.Add(1100*time.Millisecond)), "burst 1: no saving up")

	q.setRate(t0.Add(1100*time.Millisecond), 0)
	require.Empty(t, takeAll(q, t0.Add(time.Hour)))
	require.Equal(t, 2, q.len())
	require.True(t, q.remove("n4"))
	require.False(t, q.remove("n4"))
	q.setRate(t0.Add(time.Hour), 1)
	require.Equal(t, []string{"n5"}, takeAll(q, t0.Add(time.Hour+time.Second)))
	require.Equal(t, 0, q.len())
}

// TestZoneQueueRetry: a node whose processing fails goes to the back of
// the queue and is not taken again before its retry time.
func TestZoneQueueRetry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	q := newZoneQueue(100)
	q.add("bad")
	q.add("good")
	var got []string
	fail := func(n string) (bool, time.Duration) { got = append(got, n); return n != "bad", time.Second }
	q.try(t0, fail)
	require.Equal(t, []string{"bad"}, got, "one token at t0")
	q.try(t0.Add(20*time.Millisecond), fail)
	require.Equal(t, []string{"bad", "good"}, got)
	q.try(t0.Add(500*time.Millisecond), fail)
	require.Equal(t, []string{"bad", "good"}, got, "bad waits for its retry time")
	q.try(t0.Add(1100*time.Millisecond), fail)
	require.Equal(t, []string{"bad", "good", "bad"}, got)
	require.Equal(t, 1, q.len())
}
