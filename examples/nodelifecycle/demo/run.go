package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
)

// ErrStepFailed wraps the error of the step that did not hold.
var ErrStepFailed = demorun.ErrStepFailed

// Run starts a cluster, plays the scenario, narrating to w, and returns an
// error wrapping ErrStepFailed for the first step whose check fails. It
// needs at least 2 zones, 4 nodes per zone and 5 pods per node.
func Run(ctx context.Context, w io.Writer, o Options) (err error) {
	o = o.withDefaults()
	if o.Zones < 2 || o.NodesPerZone < 4 || o.PodsPerNode < 5 {
		return errors.New("demo: the scenario needs at least 2 zones, 4 nodes per zone and 5 pods per node")
	}
	r := newRecorder(w, o.Clock)
	o.OnEvent, o.OnEvict = demorun.Chain(r.onEvent, o.OnEvent), demorun.Chain(r.onEvict, o.OnEvict)
	r.Printf("starting embedded etcd, API server (nodes, pods at /api/v1; leases at /apis/coordination.k8s.io/v1), "+
		"%d×%d simulated nodes with %d pods each, node lifecycle controller and taint manager", o.Zones, o.NodesPerZone, o.PodsPerNode)
	r.Printf("timing: lease renewal %s, grace period %s, monitor period %s, tolerationSeconds %d; zone rates %g/s (normal), %g/s (partial, zones > %d nodes)",
		o.Renew, o.Grace, o.Monitor, o.TolerationSeconds, o.Rates.Normal, o.Rates.Secondary, o.Rates.LargeClusterThreshold)
	s, err := Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	r.Printf("API server at %s (try: kubectl --server %s get nodes)", s.API.URL, s.API.URL)
	sc := &script{ctx: ctx, s: s, r: r}
	if c, ok := o.Clock.(stepper); ok {
		sc.step = c.Step
	}
	return demorun.Play(r.Narrator, sc, steps)
}

// steps is the scenario.
var steps = []demorun.Step[*script]{
	{Title: "all nodes Ready", Run: stepAllReady},
	{Title: "two nodes of zone-a stop heartbeating", Run: stepSomeNodesDown},
	{Title: "their heartbeats resume", Run: stepResume},
	{Title: "all of zone-a goes down", Run: stepZoneDown},
	{Title: "every zone goes down", Run: stepAllDown},
	{Title: "every node comes back", Run: stepAllBack},
}

func stepAllReady(sc *script) error {
	if err := sc.await("every node Ready and every zone Normal", func() bool {
		return sc.allReady() && sc.zonesAre(string(controller.StateNormal))
	}); err != nil {
		return err
	}
	nodes := sc.s.Sim.Nodes()
	pods := 0
	for _, n := range nodes {
		if got := len(sc.pods(n)); got != sc.s.Options.PodsPerNode {
			return fmt.Errorf("node %s has %d pods, want %d", n, got, sc.s.Options.PodsPerNode)
		}
		pods += sc.s.Options.PodsPerNode
	}
	sc.r.Printf("%d nodes Ready in %d zones, %d pods; nodes informer at rv=%s, pods at rv=%s", len(nodes),
		sc.s.Options.Zones, pods, sc.s.Informers.Nodes.LastSyncResourceVersion(), sc.s.Informers.Pods.LastSyncResourceVersion())
	sc.r.Printf("heartbeats: %s", sc.leaseLine(nodes[0]))
	return nil
}

// victims are the nodes stopped in steps 2 and 3.
func (sc *script) victims() []string { return sc.s.Sim.NodesInZone(simulator.ZoneName(0))[:2] }

func stepSomeNodesDown(sc *script) error {
	victims := sc.victims()
	ev, evictions := sc.r.marks()
	for _, v := range victims {
		sc.r.Printf("stopping %s; %s", v, sc.leaseLine(v))
	}
	if err := sc.s.Sim.Stop(victims...); err != nil {
		return err
	}
	T := time.Duration(sc.s.Options.TolerationSeconds) * time.Second
	pending := 0
	for _, v := range victims {
		pending += len(sc.expectedAfterTaint(v)) - 1
	}
	if err := sc.await("NodeReady Unknown, unreachable taints, plain and first tolerating pods evicted", func() bool {
		for _, v := range victims {
			ts := sc.taints(v)
			if sc.ready(v) != "Unknown" || !slices.Contains(ts, api.TaintUnreachable+":NoSchedule") ||
				!slices.Contains(ts, api.TaintUnreachable+":NoExecute") || !slices.Equal(sc.pods(v), sc.expectedAfterTaint(v)) {
				return false
			}
		}
		return sc.s.Taints.Pending() == pending && len(sc.r.evictionsSince(evictions)) == len(victims)*(sc.s.Options.PodsPerNode-1-pending/len(victims))
	}); err != nil {
		return err
	}
	taintedAt := map[string]time.Time{}
	var times []time.Time
	for _, e := range sc.r.eventsSince(ev, controller.EventTainted) {
		if e.Detail == api.TaintUnreachable+":NoExecute" {
			taintedAt[e.Node] = e.Time
			times = append(times, e.Time)
		}
	}
	if err := checkSpacing(times, sc.s.Controller.ZoneRate(simulator.ZoneName(0))); err != nil {
		return err
	}
	for _, e := range sc.r.evictionsSince(evictions) {
		if e.Waited > 0 && (e.Waited != T || e.Time.Sub(taintedAt[e.Node]) < T) {
			return fmt.Errorf("pod %s evicted %s after its node's taint, tolerating %s", e.Pod, e.Time.Sub(taintedAt[e.Node]), e.Waited)
		}
	}
	for _, n := range sc.s.Sim.Nodes() {
		if !slices.Contains(victims, n) && len(sc.pods(n)) != sc.s.Options.PodsPerNode {
			return fmt.Errorf("node %s lost pods", n)
		}
	}
	sc.r.Printf("zone-a is %s (2 of %d not Ready); daemon pods kept; %d evictions pending (longer tolerationSeconds)",
		sc.s.Controller.ZoneStates()[simulator.ZoneName(0)], sc.s.Options.NodesPerZone, sc.s.Taints.Pending())
	for _, v := range victims {
		sc.r.Printf("%s: taints %s; pods %s; %s", v, strings.Join(sc.taints(v), ","), strings.Join(sc.pods(v), ","), sc.leaseLine(v))
	}
	return nil
}

func stepResume(sc *script) error {
	victims := sc.victims()
	pending := sc.s.Taints.Pending()
	if err := sc.s.Sim.Resume(victims...); err != nil {
		return err
	}
	// Renew at once rather than at the next round: the pending evictions
	// are due T (the first tolerating pod's tolerationSeconds) after step 2
	// ended, less the zone's spacing between the two taints, and on the
	// wall clock the controllers react meanwhile.
	if err := sc.s.Sim.HeartbeatNow(sc.ctx, victims...); err != nil {
		return err
	}
	if err := sc.await("Ready again, taints removed, pending evictions cancelled", func() bool {
		for _, v := range victims {
			if sc.ready(v) != "True" || len(sc.taints(v)) > 0 {
				return false
			}
		}
		return sc.s.Taints.Pending() == 0
	}); err != nil {
		return err
	}
	for _, v := range victims {
		if !slices.Equal(sc.pods(v), sc.expectedAfterTaint(v)) {
			return fmt.Errorf("node %s has pods %v, want %v", v, sc.pods(v), sc.expectedAfterTaint(v))
		}
		sc.r.Printf("%s Ready, untainted (node rv=%s); %s", v, sc.node(v).ResourceVersion, sc.leaseLine(v))
	}
	sc.r.Printf("%d pending evictions cancelled; those pods still run", pending)
	return nil
}

func stepZoneDown(sc *script) error {
	zone := simulator.ZoneName(0)
	nodes := sc.s.Sim.NodesInZone(zone)
	ev, _ := sc.r.marks()
	if err := sc.s.Sim.Stop(nodes...); err != nil {
		return err
	}
	if err := sc.await(zone+" FullDisruption, every node NoExecute-tainted, plain pods evicted", func() bool {
		if sc.s.Controller.ZoneStates()[zone] != controller.StateFullDisruption {
			return false
		}
		for _, n := range nodes {
			if !sc.hasNoExecute(n) || slices.ContainsFunc(sc.pods(n), func(p string) bool { return strings.Contains(p, "-plain-") }) {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	if got, want := sc.s.Controller.ZoneRate(zone), sc.s.Options.Rates.Normal; got != want {
		return fmt.Errorf("%s rate %g/s, want %g/s", zone, got, want)
	}
	var times []time.Time
	for _, e := range sc.r.eventsSince(ev, controller.EventTainted) {
		if strings.HasSuffix(e.Detail, ":NoExecute") {
			times = append(times, e.Time)
		}
	}
	if err := checkSpacing(times, sc.s.Options.Rates.Normal); err != nil {
		return err
	}
	var states []string
	for _, e := range sc.r.eventsSince(ev, controller.EventZoneState) {
		states = append(states, fmt.Sprintf("%s→%s (%g/s)", e.Zone, e.Detail, e.Rate))
	}
	sc.r.Printf("zone transitions: %s; %d nodes tainted no faster than %g/s", strings.Join(states, ", "), len(times), sc.s.Options.Rates.Normal)
	return nil
}

func stepAllDown(sc *script) error {
	ev, _ := sc.r.marks()
	sc.s.Sim.StopAll()
	if err := sc.await("every zone fully disrupted, NoExecute taints removed, no eviction pending", func() bool {
		if len(sc.r.eventsSince(ev, controller.EventAllDisrupted)) == 0 || sc.s.Taints.Pending() != 0 ||
			!sc.zonesAre(string(controller.StateFullDisruption)) {
			return false
		}
		for _, n := range sc.s.Sim.Nodes() {
			if sc.hasNoExecute(n) || sc.ready(n) != "Unknown" {
				return false
			}
		}
		return true
	}); err != nil {
		return err
	}
	for z := range sc.s.Options.Zones {
		if r := sc.s.Controller.ZoneRate(simulator.ZoneName(z)); r != 0 {
			return fmt.Errorf("%s rate %g/s, want 0", simulator.ZoneName(z), r)
		}
	}
	_, evictions := sc.r.marks()
	hold := 2*time.Duration(sc.s.Options.TolerationSeconds)*time.Second + sc.s.Options.Grace
	sc.r.Printf("every zone rate 0/s; watching %s for evictions or NoExecute taints", hold)
	end := sc.s.Options.Clock.Now().Add(hold)
	if err := sc.until("the end of the watch", hold+sc.s.Options.StepTimeout, func() (bool, error) {
		if got := sc.r.evictionsSince(evictions); len(got) > 0 {
			return false, fmt.Errorf("pod %s evicted while every zone is down", got[0].Pod)
		}
		for _, n := range sc.s.Sim.Nodes() {
			if sc.hasNoExecute(n) {
				return false, fmt.Errorf("node %s NoExecute-tainted while every zone is down", n)
			}
		}
		return !sc.s.Options.Clock.Now().Before(end), nil
	}); err != nil {
		return err
	}
	sc.r.Printf("no eviction and no NoExecute taint in %s with every node Unknown", hold)
	return nil
}

func stepAllBack(sc *script) error {
	ev, _ := sc.r.marks()
	sc.s.Sim.ResumeAll()
	if err := sc.await("every node Ready and untainted, every zone Normal", func() bool {
		return sc.allReady() && sc.zonesAre(string(controller.StateNormal)) &&
			len(sc.r.eventsSince(ev, controller.EventAllDisruptedOver)) == 1
	}); err != nil {
		return err
	}
	total := 0
	for _, n := range sc.s.Sim.Nodes() {
		total += len(sc.pods(n))
	}
	_, evictions := sc.r.marks()
	sc.r.Printf("%d pods left after %d evictions; nodes informer at rv=%s", total, evictions, sc.s.Informers.Nodes.LastSyncResourceVersion())
	return nil
}
