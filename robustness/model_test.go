package robustness

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/listwatch/listwatch/storage"
)

// The linearizability model: one object (one key) of the keyspace. A
// history is split by key before checking, so each check is small.

// mState is the object: absent, or present with the seq of the write that
// made it and its resourceVersion (0 when a write of unknown outcome made
// it and no read has told the RV yet).
type mState struct {
	Exists bool
	Seq    string
	RV     uint64
}

// mInput is a request on the key.
type mInput struct {
	Kind opKind
	Seq  string // a write's value
	Pre  uint64 // a cas write's precondition
}

// mOutput is the answer. Unknown: the request failed in a way that does
// not say whether it took effect (it is then "maybe happened", with no
// return time).
type mOutput struct {
	Unknown bool
	Code    string // "ok", "exists", "notfound", "conflict"
	RV      uint64 // a write's new RV, a read's object RV
	Seq     string // a read's object seq, a delete's last state seq
}

func preHolds(s mState, in mInput) bool {
	return in.Kind != opCASUpdate && in.Kind != opCASDelete || s.RV == 0 || s.RV == in.Pre
}

// step returns every state the request may leave s in given its answer
// (none: the answer is impossible in s).
func step(s mState, in mInput, out mOutput) []mState {
	if out.Unknown { // the request may or may not have taken effect
		switch in.Kind {
		case opCreate:
			if !s.Exists {
				return []mState{s, {Exists: true, Seq: in.Seq}}
			}
		case opUpdate, opCASUpdate:
			if s.Exists && preHolds(s, in) {
				return []mState{s, {Exists: true, Seq: in.Seq}}
			}
		case opDelete, opCASDelete:
			if s.Exists && preHolds(s, in) {
				return []mState{s, {}}
			}
		}
		return []mState{s}
	}
	switch in.Kind {
	case opCreate:
		switch out.Code {
		case "ok":
			if !s.Exists {
				return []mState{{Exists: true, Seq: in.Seq, RV: out.RV}}
			}
		case "exists":
			if s.Exists {
				return []mState{s}
			}
		}
	case opUpdate, opCASUpdate:
		switch out.Code {
		case "ok":
			if s.Exists && preHolds(s, in) && out.RV > s.RV {
				return []mState{{Exists: true, Seq: in.Seq, RV: out.RV}}
			}
		case "notfound":
			if !s.Exists {
				return []mState{s}
			}
		case "conflict":
			if s.Exists && in.Kind == opCASUpdate && s.RV != in.Pre {
				return []mState{s}
			}
		}
	case opDelete, opCASDelete:
		switch out.Code {
		case "ok":
			if s.Exists && preHolds(s, in) && s.Seq == out.Seq {
				return []mState{{}}
			}
		case "notfound":
			if !s.Exists {
				return []mState{s}
			}
		case "conflict":
			if s.Exists && in.Kind == opCASDelete && s.RV != in.Pre {
				return []mState{s}
			}
		}
	case opGet:
		switch out.Code {
		case "ok":
			if s.Exists && s.Seq == out.Seq && (s.RV == 0 || s.RV == out.RV) {
				return []mState{{Exists: true, Seq: s.Seq, RV: out.RV}}
			}
		case "notfound":
			if !s.Exists {
				return []mState{s}
			}
		}
	}
	return nil
}

// keyModel is the porcupine model of one key.
var keyModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{mState{}} },
	Step: func(state, input, output any) []any {
		var out []any
		for _, s := range step(state.(mState), input.(mInput), output.(mOutput)) {
			out = append(out, s)
		}
		return out
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(mInput), output.(mOutput)
		s := string(in.Kind)
		if in.Seq != "" {
			s += "(" + in.Seq + ")"
		}
		if in.Pre != 0 {
			s += fmt.Sprintf(" if-rv=%d", in.Pre)
		}
		if out.Unknown {
			return s + " -> ?"
		}
		s += " -> " + out.Code
		if out.Seq != "" {
			s += " " + out.Seq
		}
		if out.RV != 0 {
			s += fmt.Sprintf("@%d", out.RV)
		}
		return s
	},
	DescribeOperationMetadata: func(info any) string {
		if o, ok := info.(*op); ok {
			return o.String()
		}
		return ""
	},
	DescribeState: func(state any) string {
		s := state.(mState)
		if !s.Exists {
			return "absent"
		}
		return fmt.Sprintf("%s@%d", s.Seq, s.RV)
	},
}).ToModel()

// modelOps turns the recorded ops into per-key porcupine histories:
// acknowledged and failed writes (a failed write whose seq etcd holds took
// effect, at the RV etcd gave it; one etcd does not hold did not), and
// consistent reads: gets, and lists without a selector (each a read of
// every key at the list's first page).
//
// A failed create or update etcd holds took effect after its call, and
// before any answer that showed a revision at or past the one it was
// written at (etcd commits revisions in order, so that revision existed
// when the answer was given): its return time is that answer's, so it is
// not left open to the end of the history, where every later request of
// its key would be concurrent with it.
func modelOps(ops []*op, keys keyspace, t *truth) map[string][]porcupine.Operation {
	out := map[string][]porcupine.Operation{}
	seenBy := newRevisionSeen(ops)
	add := func(key string, o *op, ret time.Duration, in mInput, res mOutput) {
		r := int64(ret)
		switch {
		case res.Unknown: // it may take effect at any point after its call
			r = math.MaxInt64
		case o.failed() && res.Code == "ok":
			r = math.MaxInt64
			if by, ok := seenBy.by(res.RV); ok {
				r = int64(max(by, o.Call))
			}
		}
		out[key] = append(out[key], porcupine.Operation{ClientId: o.Client, Input: in, Output: res,
			Call: int64(o.Call), Return: r, Metadata: o})
	}
	for _, o := range ops {
		switch {
		case o.Kind.write():
			in := mInput{Kind: o.Kind, Seq: o.Seq, Pre: o.Precondition}
			res, ok := writeOutput(o, t)
			if ok {
				add(o.Key, o, o.Return, in, res)
			}
		case o.Kind == opGet && o.Mode == rvConsistent && !o.failed():
			res := mOutput{Code: "notfound"}
			if o.Found {
				res = mOutput{Code: "ok", Seq: o.GotSeq, RV: o.RV}
			}
			add(o.Key, o, o.Return, mInput{Kind: opGet}, res)
		case o.Kind == opList && o.Mode == rvConsistent && o.Label == "" && !o.failed():
			ret := o.Return
			if o.FirstReturn != 0 {
				ret = o.FirstReturn
			}
			got := map[string]item{}
			for _, it := range o.Items {
				got[it.Key] = it
			}
			for _, k := range keys.keys {
				res := mOutput{Code: "notfound"}
				if it, ok := got[k]; ok {
					res = mOutput{Code: "ok", Seq: it.Seq, RV: it.RV}
				}
				add(k, o, ret, mInput{Kind: opGet}, res)
			}
		}
	}
	return out
}

// revisionSeen tells by when the run knew a revision was committed: the
// earliest return of a successful request whose RV is at or past it.
type revisionSeen struct {
	rvs    []uint64        // ascending
	before []time.Duration // before[i]: the earliest return among requests with RV >= rvs[i]
}

func newRevisionSeen(ops []*op) *revisionSeen {
	var ok []*op
	for _, o := range ops {
		if !o.failed() && o.RV > 0 {
			ok = append(ok, o)
		}
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].RV < ok[j].RV })
	s := &revisionSeen{rvs: make([]uint64, len(ok)), before: make([]time.Duration, len(ok))}
	for i := len(ok) - 1; i >= 0; i-- {
		s.rvs[i], s.before[i] = ok[i].RV, ok[i].Return
		if i+1 < len(ok) {
			s.before[i] = min(s.before[i], s.before[i+1])
		}
	}
	return s
}

// by returns when a request was first answered with revision rev or a
// later one (false: never).
func (s *revisionSeen) by(rev uint64) (time.Duration, bool) {
	i := sort.Search(len(s.rvs), func(i int) bool { return s.rvs[i] >= rev })
	if i == len(s.rvs) {
		return 0, false
	}
	return s.before[i], true
}

// writeOutput is a write's answer for the model; false drops the write
// (it failed and etcd shows it did not take effect).
func writeOutput(o *op, t *truth) (mOutput, bool) {
	if !o.failed() {
		return mOutput{Code: "ok", RV: o.RV, Seq: o.GotSeq}, true
	}
	switch {
	case o.is(storage.CodeKeyExists):
		return mOutput{Code: "exists"}, true
	case o.is(storage.CodeNotFound):
		return mOutput{Code: "notfound"}, true
	case o.is(storage.CodeConflict):
		return mOutput{Code: "conflict"}, true
	}
	if o.Kind == opDelete || o.Kind == opCASDelete {
		return mOutput{Unknown: true}, true
	}
	// A create or update writes a seq of its own: etcd's history says
	// whether, and at which RV, it took effect.
	if v, ok := t.bySeq[o.Seq]; ok {
		return mOutput{Code: "ok", RV: v.rev}, true
	}
	return mOutput{}, false
}

// linearizable checks every key's history; it returns the keys whose
// history is not linearizable, and those the checker could not decide in
// time, in key order.
// progress, if not nil, is told each key's result and time.
func linearizable(hist map[string][]porcupine.Operation, timeout time.Duration,
	progress func(format string, args ...any)) (bad, undecided []string) {
	keys := make([]string, 0, len(hist))
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		ops := hist[k]
		t0 := time.Now()
		verdict := porcupine.CheckOperationsTimeout(keyModel, ops, timeout)
		if progress != nil {
			progress("linearizable: key %s (%d of %d), %d operations: %s in %v", k, i+1, len(keys), len(ops),
				verdict, time.Since(t0).Round(time.Millisecond))
		}
		switch verdict {
		case porcupine.Illegal:
			bad = append(bad, k)
		case porcupine.Unknown:
			undecided = append(undecided, k)
		}
	}
	sort.Strings(bad)
	sort.Strings(undecided)
	return bad, undecided
}
