package demo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
	"github.com/listwatch/listwatch/reflector"
)

// script is the state the steps share.
type script struct {
	ctx context.Context
	s   *Stack
	r   *recorder
	// step moves Options.Clock forward when Run drives it (nil on the
	// wall clock).
	step func(time.Duration)
	// current is the etcd revision up to which the informers were last
	// found to hold every write.
	current int64
}

// stepper is a clock Run drives (workqueuetest.FakeClock is one).
type stepper interface{ Step(d time.Duration) }

// fakeTick is how far Run steps a clock it drives at a time: less than
// every period of the scenario, so that no timer is passed by much.
const fakeTick = 50 * time.Millisecond

// await waits until cond, which reads memory only (informers, recorded
// reports), holds, or fails after StepTimeout.
func (sc *script) await(what string, cond func() bool) error {
	return sc.until(what, sc.s.Options.StepTimeout, func() (bool, error) { return cond(), nil })
}

// until waits until cond (memory only) reports done or fails, or fails
// after timeout. On the wall clock it polls cond. On a clock Run drives,
// it checks cond each time the cluster is quiet and, while cond does not
// hold, steps the clock by fakeTick: time moves only once everything due
// at the current time has happened, and timeout is measured on that
// clock. Then it fails too when the cluster is not quiet for StepTimeout
// of real time (a part is stuck).
func (sc *script) until(what string, timeout time.Duration, cond func() (bool, error)) error {
	var err error
	check := func() bool {
		var done bool
		done, err = cond()
		return done || err != nil
	}
	if sc.step == nil {
		if werr := demorun.Await(sc.ctx, timeout, what, check); werr != nil {
			return werr
		}
		return err
	}
	clock := sc.s.Options.Clock
	end := clock.Now().Add(timeout)
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	quietAt := time.Now() // on the wall clock
	for {
		busy := sc.busy()
		switch {
		case sc.ctx.Err() != nil:
			return fmt.Errorf("waiting for %s: %w", what, sc.ctx.Err())
		case busy == "" && check():
			return err
		case busy == "" && !clock.Now().Before(end):
			return fmt.Errorf("timed out after %s on the clock waiting for %s", timeout, what)
		case busy == "":
			sc.step(fakeTick)
			quietAt = time.Now()
			continue
		case time.Since(quietAt) > sc.s.Options.StepTimeout:
			return fmt.Errorf("waiting for %s: %s busy for %s at %s on the clock", what, busy,
				sc.s.Options.StepTimeout, clock.Now().Format("15:04:05.000"))
		}
		select {
		case <-sc.ctx.Done():
		case <-poll.C:
		}
	}
}

// busy names a part of the cluster that has not done everything due at
// the clock's current time, or an informer that does not hold every
// object as the API server has it; "" when the cluster is quiet. The
// parts are asked again after the informers, which a part may have
// written to meanwhile: the informers then hold every write a part made
// before its reactions to them are counted.
func (sc *script) busy() string {
	parts := func() string {
		switch {
		case !sc.s.Sim.Quiet():
			return "simulator"
		case !sc.s.Controller.Quiet():
			return "node lifecycle controller"
		case !sc.s.Taints.Quiet():
			return "taint manager"
		}
		return ""
	}
	if b := parts(); b != "" {
		return b
	}
	ctx, cancel := context.WithTimeout(sc.ctx, sc.s.Options.StepTimeout)
	defer cancel()
	if err := sc.informersCurrent(ctx); err != nil {
		return err.Error()
	}
	return parts()
}

// informersCurrent reports an error unless the informers hold every node,
// lease and pod at the resourceVersion a consistent list has it. When
// nothing was written since they last did, it lists nothing.
func (sc *script) informersCurrent(ctx context.Context) error {
	rev, err := sc.s.Etcd.Get(ctx, sc.s.Options.Prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return err
	}
	if rev.Header.Revision == sc.current {
		return nil
	}
	inf := sc.s.Informers
	var nodes corev1.NodeList
	if err := sc.s.Client.List(ctx, api.Nodes, "", &nodes); err != nil {
		return err
	}
	if !holds(inf.Nodes, ptrs(nodes.Items)) {
		return errors.New("nodes informer behind")
	}
	var leases coordinationv1.LeaseList
	if err := sc.s.Client.List(ctx, api.Leases, api.LeaseNamespace, &leases); err != nil {
		return err
	}
	if !holds(inf.Leases, ptrs(leases.Items)) {
		return errors.New("leases informer behind")
	}
	var pods corev1.PodList
	if err := sc.s.Client.List(ctx, api.Pods, "", &pods); err != nil {
		return err
	}
	if !holds(inf.Pods, ptrs(pods.Items)) {
		return errors.New("pods informer behind")
	}
	sc.current = rev.Header.Revision // the lists were read at it or later
	return nil
}

// holds reports whether inf holds exactly objs, each at its
// resourceVersion.
func holds[T reflector.Object](inf reflector.SharedInformer[T], objs []T) bool {
	if len(inf.GetStore().ListKeys()) != len(objs) {
		return false
	}
	for _, o := range objs {
		key, err := reflector.MetaNamespaceKeyFunc(o)
		if err != nil {
			return false
		}
		got, ok := inf.GetIndexer().GetByKey(key)
		if !ok || got.GetResourceVersion() != o.GetResourceVersion() {
			return false
		}
	}
	return true
}

// ptrs returns pointers to the elements of items.
func ptrs[E any](items []E) []*E {
	out := make([]*E, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
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
