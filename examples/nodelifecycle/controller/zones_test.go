package controller

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestZoneState: Kubernetes' classification: no Ready node is
// FullDisruption; more than two not Ready and at least 55% is
// PartialDisruption; anything else Normal.
func TestZoneState(t *testing.T) {
	for _, tc := range []struct {
		ready, notReady int
		want            ZoneState
	}{
		{0, 0, StateNormal},
		{5, 0, StateNormal},
		{0, 1, StateFullDisruption},
		{0, 7, StateFullDisruption},
		{1, 2, StateNormal},            // 67% but only two not Ready
		{2, 3, StatePartialDisruption}, // 60%
		{9, 11, StatePartialDisruption},
		{45, 55, StatePartialDisruption}, // exactly 55%
		{46, 54, StateNormal},
		{100, 3, StateNormal},
	} {
		require.Equal(t, tc.want, DefaultRates.zoneState(tc.ready, tc.notReady), "%d ready, %d not", tc.ready, tc.notReady)
	}
}

// TestZoneRate: Normal and FullDisruption zones take nodes at the normal
// rate; a partially disrupted zone at the secondary rate when larger than
// the large-cluster threshold, not at all otherwise.
func TestZoneRate(t *testing.T) {
	for _, tc := range []struct {
		state ZoneState
		size  int
		want  float64
	}{
		{StateNormal, 3, 0.1},
		{StateNormal, 5000, 0.1},
		{StateFullDisruption, 3, 0.1},
		{StatePartialDisruption, 50, 0},
		{StatePartialDisruption, 51, 0.01},
		{StatePartialDisruption, 5000, 0.01},
	} {
		require.Equal(t, tc.want, DefaultRates.rate(tc.state, tc.size), "%s %d", tc.state, tc.size)
	}
}

// TestPlanDisruption: the transitions of handleDisruption: a zone changing
// state gets its new rate; all zones fully disrupted stops every queue
// (rate 0) once; staying so changes nothing; a Ready node anywhere leaves
// that mode and resets every zone's rate by its state.
func TestPlanDisruption(t *testing.T) {
	r := DefaultRates
	type step struct {
		counts map[string]zoneCount
		states map[string]ZoneState
		rates  map[string]float64
		enter  bool
		leave  bool
	}
	steps := []step{
		{counts: map[string]zoneCount{"a": {3, 0}, "b": {3, 0}},
			states: map[string]ZoneState{"a": StateNormal, "b": StateNormal},
			rates:  map[string]float64{"a": 0.1, "b": 0.1}},
		{counts: map[string]zoneCount{"a": {3, 0}, "b": {3, 0}},
			states: map[string]ZoneState{"a": StateNormal, "b": StateNormal}, rates: map[string]float64{}},
		{counts: map[string]zoneCount{"a": {0, 3}, "b": {3, 0}},
			states: map[string]ZoneState{"a": StateFullDisruption, "b": StateNormal},
			rates:  map[string]float64{"a": 0.1}},
		{counts: map[string]zoneCount{"a": {0, 3}, "b": {0, 3}},
			states: map[string]ZoneState{"a": StateFullDisruption, "b": StateFullDisruption},
			rates:  map[string]float64{"a": 0, "b": 0}, enter: true},
		{counts: map[string]zoneCount{"a": {0, 3}, "b": {0, 3}},
			states: map[string]ZoneState{"a": StateFullDisruption, "b": StateFullDisruption}, rates: map[string]float64{}},
		{counts: map[string]zoneCount{"a": {1, 2}, "b": {0, 3}},
			states: map[string]ZoneState{"a": StateNormal, "b": StateFullDisruption},
			rates:  map[string]float64{"a": 0.1, "b": 0.1}, leave: true},
		{counts: map[string]zoneCount{"a": {40, 60}, "b": {1, 3}},
			states: map[string]ZoneState{"a": StatePartialDisruption, "b": StatePartialDisruption},
			rates:  map[string]float64{"a": 0.01, "b": 0}},
	}
	prev := map[string]ZoneState{}
	for i, s := range steps {
		p := r.planDisruption(prev, s.counts)
		require.Equal(t, s.states, p.states, "step %d", i)
		require.Equal(t, s.rates, p.rates, "step %d", i)
		require.Equal(t, s.enter, p.enterAllDisrupted, "step %d", i)
		require.Equal(t, s.leave, p.leaveAllDisrupted, "step %d", i)
		prev = p.states
	}
}
