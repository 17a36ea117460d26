package robustness

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/storage"
)

// opKind names a client request.
type opKind string

const (
	opCreate    opKind = "create"
	opUpdate    opKind = "update"     // GuaranteedUpdate without preconditions
	opCASUpdate opKind = "cas-update" // GuaranteedUpdate with a resourceVersion precondition
	opDelete    opKind = "delete"
	opCASDelete opKind = "cas-delete"
	opGet       opKind = "get"
	opList      opKind = "list"
	opWatch     opKind = "watch" // a watch's start
)

func (k opKind) write() bool { return k != opGet && k != opList && k != opWatch }

// rvMode is how a read names its resource version.
type rvMode string

const (
	rvConsistent   rvMode = "consistent"   // RV ""
	rvAny          rvMode = "any"          // RV "0"
	rvNotOlderThan rvMode = "notOlderThan" // RV N, match NotOlderThan (or legacy for Get)
	rvExact        rvMode = "exact"        // RV N, match Exact (lists)
)

// item is one object a read returned: its key (namespace/name), the seq
// of the write that made this version, and its resourceVersion.
type item struct {
	Key string `json:"key"`
	Seq string `json:"seq"`
	RV  uint64 `json:"rv"`
}

// op is one recorded client request: what it asked, when, and what it got.
type op struct {
	ID      int    `json:"id"`
	Client  int    `json:"client"`
	Replica int    `json:"replica"`
	Kind    opKind `json:"kind"`
	Key     string `json:"key,omitempty"` // namespace/name, for single-key requests
	// Seq is the value a write writes (unique to it).
	Seq string `json:"seq,omitempty"`
	// Precondition is a cas write's required resourceVersion.
	Precondition uint64 `json:"precondition,omitempty"`
	Mode         rvMode `json:"mode,omitempty"`
	ReqRV        uint64 `json:"reqRV,omitempty"`
	Label        string `json:"label,omitempty"`
	Limit        int64  `json:"limit,omitempty"`

	Call   time.Duration `json:"call"`   // since the run began
	Return time.Duration `json:"return"` // since the run began
	// FirstReturn is when a paged list's first page came back (the pages
	// are all read at the first page's revision).
	FirstReturn time.Duration `json:"firstReturn,omitempty"`

	Err string `json:"err,omitempty"`
	// Aborted: the run ended under the request (its error is the run's
	// cancellation, not an answer).
	Aborted bool         `json:"aborted,omitempty"`
	errCode storage.Code // CodeUnknown for untyped errors
	typed   bool

	// RV is a write's new resourceVersion, a get's object RV, a list's RV.
	RV uint64 `json:"rv,omitempty"`
	// Found and GotSeq: a get's object, or a delete's last state.
	Found  bool   `json:"found,omitempty"`
	GotSeq string `json:"gotSeq,omitempty"`
	// Items are a list's objects, every page together.
	Items []item `json:"items,omitempty"`
	Pages int    `json:"pages,omitempty"`
}

func (o *op) failed() bool { return o.Err != "" }

// setErr records err, typed or not.
func (o *op) setErr(err error) {
	o.Err = err.Error()
	var se *storage.Error
	if errors.As(err, &se) {
		o.errCode, o.typed = se.Code, true
	}
}

// is reports whether the op failed with the typed error c.
func (o *op) is(c storage.Code) bool { return o.failed() && o.typed && o.errCode == c }

func (o *op) String() string {
	s := fmt.Sprintf("#%d client %d replica %d %s", o.ID, o.Client, o.Replica, o.Kind)
	if o.Key != "" {
		s += " " + o.Key
	}
	if o.Mode != "" {
		s += fmt.Sprintf(" %s", o.Mode)
		if o.ReqRV != 0 {
			s += fmt.Sprintf("@%d", o.ReqRV)
		}
	}
	if o.Label != "" {
		s += fmt.Sprintf(" labels=%q", o.Label)
	}
	if o.Limit != 0 {
		s += fmt.Sprintf(" limit=%d", o.Limit)
	}
	if o.Seq != "" {
		s += " seq=" + o.Seq
	}
	if o.Precondition != 0 {
		s += fmt.Sprintf(" if-rv=%d", o.Precondition)
	}
	s += fmt.Sprintf(" [%v, %v]", o.Call.Round(time.Millisecond), o.Return.Round(time.Millisecond))
	switch {
	case o.failed():
		s += " -> error: " + o.Err
	case o.Kind == opList:
		s += fmt.Sprintf(" -> %d items at RV %d (%d pages)", len(o.Items), o.RV, o.Pages)
	case o.Kind == opGet && !o.Found:
		s += " -> not found"
	case o.Kind == opGet:
		s += fmt.Sprintf(" -> seq=%s rv=%d", o.GotSeq, o.RV)
	case o.Kind == opWatch:
		s += " -> started"
	default:
		s += fmt.Sprintf(" -> ok rv=%d", o.RV)
	}
	return s
}

// recorder collects the ops of a run and the newest RV any write was
// acknowledged at.
type recorder struct {
	start time.Time
	ids   atomic.Int64
	maxRV atomic.Uint64 // highest RV acknowledged to a client or read in a list

	mu  sync.Mutex
	ops []*op
}

func (r *recorder) since() time.Duration { return time.Since(r.start) }

func (r *recorder) add(o *op) {
	if o.RV > 0 && !o.failed() {
		for {
			cur := r.maxRV.Load()
			if o.RV <= cur || r.maxRV.CompareAndSwap(cur, o.RV) {
				break
			}
		}
	}
	r.mu.Lock()
	r.ops = append(r.ops, o)
	r.mu.Unlock()
}

func (r *recorder) all() []*op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*op(nil), r.ops...)
}
