package demo

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
)

// script is the state the steps share.
type script struct {
	ctx context.Context
	s   *Stack
	r   *recorder
}

// await polls cond, which reads memory only (informers, recorded
// reports), until it holds or the step times out.
func (sc *script) await(what string, cond func() bool) error {
	return demorun.Await(sc.ctx, sc.s.Options.StepTimeout, what, cond)
}

// node returns the informer's copy of name (nil if unknown).
func (sc *script) node(name string) *corev1.Node {
	n, _ := sc.s.Informers.Nodes.GetIndexer().GetByKey(name)
	return n
}

// ready returns name's NodeReady status.
func (sc *script) ready(name string) corev1.ConditionStatus {
	if n := sc.node(name); n != nil {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status
			}
		}
	}
	return corev1.ConditionUnknown
}

// taints returns name's taints as key:effect.
func (sc *script) taints(name string) []string {
	var out []string
	if n := sc.node(name); n != nil {
		for _, t := range n.Spec.Taints {
			out = append(out, t.Key+":"+string(t.Effect))
		}
	}
	return out
}

// hasNoExecute reports whether name has a NoExecute taint.
func (sc *script) hasNoExecute(name string) bool {
	return slices.ContainsFunc(sc.taints(name), func(t string) bool { return strings.HasSuffix(t, ":NoExecute") })
}

// pods returns the names of the pods on node, sorted.
func (sc *script) pods(node string) []string {
	ps, _ := sc.s.Informers.PodsOnNode(node)
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// podIndex is the index of a simulated pod from its name.
func podIndex(name string) int {
	var i int
	_, _ = fmt.Sscanf(name[strings.LastIndex(name, "-")+1:], "%d", &i)
	return i
}

// expectedAfterTaint lists the pods a node keeps once its plain pods and
// its first tolerating pod (index 2) are gone: the daemon pod and the
// tolerating pods with index >= 4.
func (sc *script) expectedAfterTaint(node string) []string {
	var out []string
	for i := range sc.s.Options.PodsPerNode {
		switch {
		case i == 0:
			out = append(out, fmt.Sprintf("%s-%s-%d", node, simulator.PodDaemon, i))
		case i%2 == 0 && i >= 4:
			out = append(out, fmt.Sprintf("%s-%s-%d", node, simulator.PodTolerating, i))
		}
	}
	slices.Sort(out)
	return out
}

// allReady reports whether every node is Ready and untainted.
func (sc *script) allReady() bool {
	for _, n := range sc.s.Sim.Nodes() {
		if sc.ready(n) != corev1.ConditionTrue || len(sc.taints(n)) > 0 {
			return false
		}
	}
	return true
}

// zonesAre reports whether every zone is in state.
func (sc *script) zonesAre(state string) bool {
	st := sc.s.Controller.ZoneStates()
	for z := range sc.s.Options.Zones {
		if string(st[simulator.ZoneName(z)]) != state {
			return false
		}
	}
	return true
}

// leaseLine describes node's lease as the informer has it.
func (sc *script) leaseLine(node string) string {
	l, ok := sc.s.Informers.Leases.GetIndexer().GetByKey(api.LeaseNamespace + "/" + node)
	if !ok || l.Spec.RenewTime == nil {
		return "lease " + node + ": none"
	}
	return fmt.Sprintf("lease %s/%s rv=%s renewTime=%s", api.LeaseNamespace, node, l.ResourceVersion,
		l.Spec.RenewTime.Format("15:04:05.000"))
}

// checkSpacing checks that consecutive times are at least 0.9/rate apart.
func checkSpacing(times []time.Time, rate float64) error {
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	min := time.Duration(0.9 / rate * float64(time.Second))
	for i := 1; i < len(times); i++ {
		if d := times[i].Sub(times[i-1]); d < min {
			return fmt.Errorf("NoExecute taints %s apart, faster than the zone's rate %g/s", d, rate)
		}
	}
	return nil
}
