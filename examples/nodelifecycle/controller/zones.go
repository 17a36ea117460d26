package controller

// ZoneState is the health of one zone.
type ZoneState string

// The zone states.
const (
	// StateInitial is a zone not assessed yet.
	StateInitial ZoneState = "Initial"
	// StateNormal is a zone with enough Ready nodes.
	StateNormal ZoneState = "Normal"
	// StatePartialDisruption is a zone where more than two nodes, and at
	// least the unhealthy threshold's share, are not Ready.
	StatePartialDisruption ZoneState = "PartialDisruption"
	// StateFullDisruption is a zone without a Ready node.
	StateFullDisruption ZoneState = "FullDisruption"
)

// Rates are the rate rules of the zone queues.
type Rates struct {
	// Normal is the rate (nodes per second) of a Normal zone, and of a
	// fully disrupted one while another zone is not.
	Normal float64
	// Secondary is the rate of a partially disrupted zone larger than
	// LargeClusterThreshold.
	Secondary float64
	// LargeClusterThreshold is the zone size above which a partially
	// disrupted zone keeps the Secondary rate rather than stopping.
	LargeClusterThreshold int
	// UnhealthyZoneThreshold is the share of not-Ready nodes from which a
	// zone is partially disrupted.
	UnhealthyZoneThreshold float64
}

// DefaultRates are Kubernetes' defaults (kube-controller-manager's
// --node-eviction-rate, --secondary-node-eviction-rate,
// --large-cluster-size-threshold and --unhealthy-zone-threshold).
var DefaultRates = Rates{Normal: 0.1, Secondary: 0.01, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55}

// zoneState classifies a zone with ready and notReady nodes.
func (r Rates) zoneState(ready, notReady int) ZoneState {
	switch {
	case ready == 0 && notReady > 0:
		return StateFullDisruption
	case notReady > 2 && float64(notReady)/float64(notReady+ready) >= r.UnhealthyZoneThreshold:
		return StatePartialDisruption
	}
	return StateNormal
}

// rate is the queue rate of a zone of size nodes in state.
func (r Rates) rate(state ZoneState, size int) float64 {
	switch state {
	case StatePartialDisruption:
		if size > r.LargeClusterThreshold {
			return r.Secondary
		}
		return 0
	case StateNormal, StateFullDisruption:
		return r.Normal
	}
	return r.Normal
}

// zoneCount is how many nodes of a zone are Ready and not.
type zoneCount struct{ ready, notReady int }

// size is the zone's node count.
func (z zoneCount) size() int { return z.ready + z.notReady }

// disruptionPlan is what one assessment of all zones decides.
type disruptionPlan struct {
	// states are the zones' new states.
	states map[string]ZoneState
	// rates are the queue rates to set, by zone (only zones whose rate
	// must be set).
	rates map[string]float64
	// enterAllDisrupted: every zone just became fully disrupted; remove
	// all NoExecute taints and stop.
	enterAllDisrupted bool
	// leaveAllDisrupted: some node is Ready again after all zones were
	// fully disrupted; restart every node's grace period.
	leaveAllDisrupted bool
}

// planDisruption compares the zones' previous states with their counts
// now. Zones absent from counts are forgotten.
func (r Rates) planDisruption(prev map[string]ZoneState, counts map[string]zoneCount) disruptionPlan {
	p := disruptionPlan{states: map[string]ZoneState{}, rates: map[string]float64{}}
	allNow := len(counts) > 0
	for z, c := range counts {
		s := r.zoneState(c.ready, c.notReady)
		p.states[z] = s
		if s != StateFullDisruption {
			allNow = false
		}
	}
	allBefore := true
	for z := range counts {
		if prev[z] != StateFullDisruption {
			allBefore = false
		}
	}
	switch {
	case allNow && allBefore:
		// Still all down: nothing to change, every rate stays 0.
	case allNow:
		p.enterAllDisrupted = true
		for z := range counts {
			p.rates[z] = 0
		}
	case allBefore && len(prev) > 0:
		p.leaveAllDisrupted = true
		for z, c := range counts {
			p.rates[z] = r.rate(p.states[z], c.size())
		}
	default:
		for z, c := range counts {
			if prev[z] != p.states[z] {
				p.rates[z] = r.rate(p.states[z], c.size())
			}
		}
	}
	return p
}
