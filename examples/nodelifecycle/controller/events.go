package controller

import (
	"fmt"
	"time"
)

// EventKind says what an Event reports.
type EventKind string

// The events the controller reports.
const (
	// EventNodeUnknown: a node's grace period passed; NodeReady set to
	// Unknown.
	EventNodeUnknown EventKind = "NodeStatusUnknown"
	// EventTainted: a NoExecute or NoSchedule taint was added.
	EventTainted EventKind = "Tainted"
	// EventUntainted: the controller's taints of one effect were removed.
	EventUntainted EventKind = "Untainted"
	// EventZoneState: a zone changed state (Rate is its new queue rate).
	EventZoneState EventKind = "ZoneState"
	// EventAllDisrupted: every zone is fully disrupted; NoExecute
	// tainting stops.
	EventAllDisrupted EventKind = "AllZonesDisrupted"
	// EventAllDisruptedOver: some node is Ready again.
	EventAllDisruptedOver EventKind = "AllZonesDisruptedOver"
)

// Event is something the controller did, for narration and tests.
type Event struct {
	// Time is the controller clock's time.
	Time time.Time
	// Kind says what happened.
	Kind EventKind
	// Node and Zone name what it happened to ("" when not applicable).
	Node, Zone string
	// Detail is the taint (key:effect), the zone state, or a note.
	Detail string
	// Rate is the zone's queue rate after an EventZoneState.
	Rate float64
	// RV is the resourceVersion the controller's write produced ("" when
	// it wrote nothing).
	RV string
}

// String formats e for logs.
func (e Event) String() string {
	s := string(e.Kind)
	if e.Node != "" {
		s += " node=" + e.Node
	}
	if e.Zone != "" {
		s += " zone=" + e.Zone
	}
	if e.Detail != "" {
		s += " " + e.Detail
	}
	if e.Kind == EventZoneState {
		s += fmt.Sprintf(" rate=%g/s", e.Rate)
	}
	if e.RV != "" {
		s += " rv=" + e.RV
	}
	return s
}
