package robustness

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// TestChecksOnHandMadeHistory: each check, on a hand-made etcd history
// and requests, reports exactly the requests that break its promise.
func TestChecksOnHandMadeHistory(t *testing.T) {
	g1 := labels.Set{"grp": "g1"}
	tr := newTruth([]storagetest.Change{
		{Rev: 10, Key: "ns-a/k0", Seq: "s1", Labels: g1},
		{Rev: 11, Key: "ns-a/k0", Seq: "s2", Labels: g1},
		{Rev: 12, Key: "ns-b/k1", Seq: "s3", Labels: g1},
		{Rev: 13, Key: "ns-a/k0", Seq: "s2", Labels: g1, Deleted: true},
	})
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ops := []*op{
		// (a) and (d): acknowledged at the RV etcd gave them.
		{ID: 1, Kind: opCreate, Key: "ns-a/k0", Seq: "s1", RV: 10, Call: ms(0), Return: ms(1)},
		{ID: 2, Kind: opUpdate, Key: "ns-a/k0", Seq: "s2", RV: 11, Call: ms(2), Return: ms(3)},
		// (a): a consistent get that misses the update acknowledged before it.
		{ID: 3, Kind: opGet, Key: "ns-a/k0", Mode: rvConsistent, Found: true, GotSeq: "s1", RV: 10, Call: ms(4), Return: ms(5)},
		// (b): right, then an exact list answered at another RV, a list
		// that is not etcd's state at its RV, a get not as new as asked,
		// a get of a version etcd never held.
		{ID: 4, Kind: opList, Mode: rvAny, RV: 12, Items: []item{{"ns-a/k0", "s2", 11}, {"ns-b/k1", "s3", 12}}, Call: ms(6), Return: ms(7)},
		{ID: 5, Kind: opList, Mode: rvExact, ReqRV: 11, RV: 12, Items: []item{{"ns-a/k0", "s2", 11}, {"ns-b/k1", "s3", 12}}, Call: ms(6), Return: ms(7)},
		{ID: 6, Kind: opList, Mode: rvAny, RV: 11, Items: []item{{"ns-a/k0", "s1", 10}}, Call: ms(6), Return: ms(7)},
		{ID: 7, Kind: opGet, Key: "ns-a/k0", Mode: rvNotOlderThan, ReqRV: 12, Found: true, GotSeq: "s1", RV: 10, Call: ms(6), Return: ms(7)},
		{ID: 8, Kind: opGet, Key: "ns-b/k1", Mode: rvAny, Found: true, GotSeq: "s9", RV: 12, Call: ms(6), Return: ms(7)},
		// (d): an update acknowledged that etcd never wrote.
		{ID: 9, Kind: opUpdate, Key: "ns-b/k1", Seq: "s7", RV: 14, Call: ms(8), Return: ms(9)},
		// (e): an untyped error, and an answer after the deadline.
		{ID: 10, Kind: opGet, Key: "ns-b/k1", Mode: rvAny, Call: ms(10), Return: ms(11)},
		{ID: 11, Kind: opGet, Key: "ns-b/k1", Mode: rvAny, Call: ms(10), Return: ms(10) + requestDeadline + 2*deadlineSlack,
			Found: true, GotSeq: "s3", RV: 12},
		{ID: 12, Kind: opGet, Key: "ns-b/k1", Mode: rvAny, Call: ms(12), Return: ms(13)},
	}
	ops[9].setErr(errors.New("boom"))
	ops[11].setErr(storage.ErrTimeout)
	r := &run{keys: keyspace{keys: []string{"ns-a/k0", "ns-b/k1"}}}
	res := &result{truth: tr, finalRV: 13, errorsByCode: map[string]int{}}
	r.checkLinearizable(res, ops)
	r.checkReadsAtRV(res, ops)
	r.checkLostWrites(res, ops)
	r.checkErrors(res, ops)

	want := map[checkName][]int{
		checkLinearizable: {3, 9}, // 9: an update of a key no request created
		checkReadAtRV:     {5, 6, 7, 8},
		checkLost:         {9},
		checkErrors:       {10, 11},
	}
	for c, ids := range want {
		var got []int
		for _, v := range res.of(c) {
			got = append(got, v.ID)
		}
		if !sameIDs(got, ids) {
			t.Errorf("%s reported requests %v, want %v: %v", c, got, ids, res.of(c))
		}
	}
}

func sameIDs(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[int]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		if seen[x]--; seen[x] < 0 {
			return false
		}
	}
	return true
}

// TestFailedWriteClosedByLaterRevision: a write that failed without an
// answer but that etcd holds (at RV 11) took effect before a request was
// answered at RV 12; a consistent get that begins after that answer and
// misses it is not linearizable, though the failed write alone would
// allow it (it could have taken effect at any later time).
func TestFailedWriteClosedByLaterRevision(t *testing.T) {
	tr := newTruth([]storagetest.Change{
		{Rev: 10, Key: "ns-a/k0", Seq: "s1"},
		{Rev: 11, Key: "ns-a/k0", Seq: "s2"},
		{Rev: 12, Key: "ns-b/k1", Seq: "s3"},
	})
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ops := []*op{
		{ID: 1, Client: 1, Kind: opCreate, Key: "ns-a/k0", Seq: "s1", RV: 10, Call: ms(0), Return: ms(1)},
		{ID: 2, Client: 1, Kind: opUpdate, Key: "ns-a/k0", Seq: "s2", Call: ms(2), Return: ms(3)},
		{ID: 3, Client: 2, Kind: opCreate, Key: "ns-b/k1", Seq: "s3", RV: 12, Call: ms(4), Return: ms(5)},
		{ID: 4, Client: 3, Kind: opGet, Key: "ns-a/k0", Mode: rvConsistent, Found: true, GotSeq: "s1", RV: 10, Call: ms(6), Return: ms(7)},
	}
	ops[1].setErr(storage.ErrTimeout)
	r := &run{keys: keyspace{keys: []string{"ns-a/k0", "ns-b/k1"}}}
	res := &result{truth: tr, finalRV: 12, errorsByCode: map[string]int{}}
	r.checkLinearizable(res, ops)
	if got := res.badKeys; len(got) != 1 || got[0] != "ns-a/k0" {
		t.Errorf("keys not linearizable: %v, want [ns-a/k0]", got)
	}
	// Without the answer at RV 12, the get may precede the failed write.
	res = &result{truth: tr, finalRV: 12, errorsByCode: map[string]int{}}
	r.checkLinearizable(res, []*op{ops[0], ops[1], ops[3]})
	if len(res.badKeys) != 0 {
		t.Errorf("keys not linearizable: %v, want none", res.badKeys)
	}
}
