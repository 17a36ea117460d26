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
func modelOps(ops []*op, keys keyspace, t *truth) map[string][]porcupine.Operation {
	out := map[string][]porcupine.Operation{}
	add := func(key string, o *op, ret time.Duration, in mInput, res mOutput) {
		r := int64(ret)
		if res.Unknown || o.failed() && res.Code == "ok" { // took effect at some point after its call
			r = math.MaxInt64
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
func linearizable(hist map[string][]porcupine.Operation, timeout time.Duration) (bad, undecided []string) {
	for k, ops := range hist {
		switch porcupine.CheckOperationsTimeout(keyModel, ops, timeout) {
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
