package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// ErrStepFailed wraps the error of the step that did not hold.
var ErrStepFailed = demorun.ErrStepFailed

// Scenario sizes the walk. Zero values take DefaultScenario's.
type Scenario struct {
	// Replicas is kubectl create deployment's --replicas; ScaleTo is
	// kubectl scale's.
	Replicas, ScaleTo int
}

// DefaultScenario is make demo-cluster's: 30 replicas, scaled to 40.
var DefaultScenario = Scenario{Replicas: 30, ScaleTo: 40}

// walk is the scenario's state.
type walk struct {
	*script
	k        *kubectl
	sn       Scenario
	web      *tracker
	deadNode string
}

// Run starts a cluster, plays the scenario with the real kubectl,
// narrating to w, and returns an error wrapping ErrStepFailed for the
// first step whose check fails.
func Run(ctx context.Context, w io.Writer, o Options, sn Scenario) (err error) {
	if sn.Replicas <= 0 {
		sn.Replicas = DefaultScenario.Replicas
	}
	if sn.ScaleTo <= 0 {
		sn.ScaleTo = DefaultScenario.ScaleTo
	}
	o = o.withDefaults()
	r := demorun.NewNarrator(w, nil)
	o.NarrateReports(r)
	r.Printf("starting embedded etcd, the API server (deployments, replicasets, pods, nodes, leases over List-Watch), "+
		"%d×%d simulated nodes, their kubelets (pods Running %s after binding), a scheduler and two controller manager replicas",
		o.Zones, o.NodesPerZone, o.StartDelay)
	s, err := Start(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	dir, err := os.MkdirTemp("", "demo-cluster-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	k, err := newKubectl(s.API.URL, dir)
	if err != nil {
		return err
	}
	web, reg, err := newTracker(s.View.Pods, "web")
	if err != nil {
		return err
	}
	defer func() { _ = s.View.Pods.RemoveEventHandler(reg) }()
	r.Printf("API server at %s; %s leads the controller manager", s.API.URL, s.Replicas[s.Leader()].Name)
	wk := &walk{script: &script{ctx: ctx, s: s, r: r}, k: k, sn: sn, web: web}
	return demorun.Play(r, wk, steps)
}

// kubectl runs and narrates one kubectl command, showing at most max
// lines of its output.
func (w *walk) kubectl(max int, args ...string) (string, error) {
	w.r.Printf("$ %s", w.k.line(args...))
	out, err := w.k.run(w.ctx, args...)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > max {
		// The first lines and the last one (rollout status's verdict).
		skipped := len(lines) - max
		lines = append(append(lines[:max-1:max-1], fmt.Sprintf("… (%d more lines)", skipped)), lines[len(lines)-1])
	}
	for _, l := range lines {
		if l != "" {
			w.r.Printf("  %s", l)
		}
	}
	return out, err
}

// rolloutStatus runs kubectl rollout status and checks that it says the
// rollout succeeded.
func (w *walk) rolloutStatus(name string) error {
	out, err := w.kubectl(3, "rollout", "status", "deployment/"+name, "--timeout=120s")
	if err != nil {
		return err
	}
	if !strings.Contains(out, "successfully rolled out") {
		return fmt.Errorf("rollout status said %q", out)
	}
	return nil
}

// expectImage checks that web has exactly n pods, all of image and
// available, and one active ReplicaSet.
func (w *walk) expectImage(n int, image string) error {
	return w.await(fmt.Sprintf("%d available pods of %s", n, image), func() bool {
		pods := w.podsOf("default", "web")
		if len(pods) != n || w.podsWithImage("default", "web", image) != n {
			return false
		}
		return len(rollout.Active(w.replicaSetsOf("default", "web"))) == 1 && w.rolledOut("default", "web", int32(n))
	})
}

// podsPerNode counts web's pods per node.
func (w *walk) podsPerNode() map[string]int {
	m := map[string]int{}
	for _, p := range w.podsOf("default", "web") {
		m[p.Spec.NodeName]++
	}
	return m
}

// peakWithin checks the peak number of web's pods alive since the last
// reset against replicas + maxSurge.
func (w *walk) peakWithin(replicas int) error {
	peak := w.web.resetPeak()
	d := w.deployment("default", "web")
	surge, err := rollout.MaxSurge(rollout.Defaulted(d))
	if err != nil {
		return err
	}
	w.r.Printf("check: at most %d pods alive at once (%d replicas + maxSurge %d)", peak, replicas, surge)
	if peak > replicas+int(surge) {
		return fmt.Errorf("%d pods alive at once, above %d + maxSurge %d", peak, replicas, surge)
	}
	return nil
}

// steps is the scenario.
var steps = []demorun.Step[*walk]{
	{Title: "kubectl create deployment web --replicas=N; kubectl rollout status returns", Run: func(w *walk) error {
		w.web.resetPeak()
		if _, err := w.kubectl(5, "create", "deployment", "web", "--image=nginx:1.27", fmt.Sprintf("--replicas=%d", w.sn.Replicas)); err != nil {
			return err
		}
		if err := w.rolloutStatus("web"); err != nil {
			return err
		}
		if err := w.expectImage(w.sn.Replicas, "nginx:1.27"); err != nil {
			return err
		}
		if _, err := w.kubectl(3, "get", "deployment", "web"); err != nil {
			return err
		}
		if _, err := w.kubectl(4, "get", "pods", "-o", "wide"); err != nil {
			return err
		}
		per := w.podsPerNode()
		counts := slices.Collect(func(yield func(int) bool) {
			for _, n := range per {
				if !yield(n) {
					return
				}
			}
		})
		w.r.Printf("check: %d pods over %d nodes, %d to %d per node (least allocated spreads them)", w.sn.Replicas, len(per),
			slices.Min(counts), slices.Max(counts))
		if len(per) != len(w.s.Sim.Nodes()) || slices.Max(counts)-slices.Min(counts) > 1 {
			return fmt.Errorf("pods per node %v: not spread over every node", per)
		}
		return w.peakWithin(w.sn.Replicas)
	}},
	{Title: "kubectl set image rolls every pod to the new image, within maxSurge", Run: func(w *walk) error {
		if _, err := w.kubectl(3, "set", "image", "deployment/web", "nginx=nginx:1.28"); err != nil {
			return err
		}
		if err := w.rolloutStatus("web"); err != nil {
			return err
		}
		if err := w.expectImage(w.sn.Replicas, "nginx:1.28"); err != nil {
			return err
		}
		if _, err := w.kubectl(4, "get", "replicasets"); err != nil {
			return err
		}
		if rev := rollout.Revision(w.deployment("default", "web")); rev != 2 {
			return fmt.Errorf("deployment revision %d, want 2", rev)
		}
		return w.peakWithin(w.sn.Replicas)
	}},
	{Title: "kubectl rollout undo returns to the first template (revision 3)", Run: func(w *walk) error {
		if _, err := w.kubectl(3, "rollout", "undo", "deployment/web"); err != nil {
			return err
		}
		if err := w.rolloutStatus("web"); err != nil {
			return err
		}
		if err := w.expectImage(w.sn.Replicas, "nginx:1.27"); err != nil {
			return err
		}
		out, err := w.kubectl(5, "rollout", "history", "deployment/web")
		if err != nil {
			return err
		}
		if !strings.Contains(out, "2 ") || !strings.Contains(out, "3 ") || strings.Contains(out, "\n1 ") {
			return fmt.Errorf("rollout history %q: want revisions 2 and 3 (1 became 3)", out)
		}
		rss := w.replicaSetsOf("default", "web")
		if len(rss) != 2 {
			return fmt.Errorf("%d replicasets, want 2 (the first one reused)", len(rss))
		}
		return w.peakWithin(w.sn.Replicas)
	}},
	{Title: "kubectl scale deployment web --replicas=M", Run: func(w *walk) error {
		if _, err := w.kubectl(3, "scale", "deployment", "web", fmt.Sprintf("--replicas=%d", w.sn.ScaleTo)); err != nil {
			return err
		}
		if err := w.rolloutStatus("web"); err != nil {
			return err
		}
		if err := w.expectImage(w.sn.ScaleTo, "nginx:1.27"); err != nil {
			return err
		}
		_, err := w.kubectl(3, "get", "deployment", "web")
		return err
	}},
	{Title: "a node stops heartbeating: its pods are evicted and replaced on the others", Run: func(w *walk) error {
		per := w.podsPerNode()
		for n, c := range per {
			if w.deadNode == "" || c > per[w.deadNode] || c == per[w.deadNode] && n < w.deadNode {
				w.deadNode = n
			}
		}
		w.r.Printf("stopping the kubelet of %s (%d pods of web)", w.deadNode, per[w.deadNode])
		if err := w.s.Sim.Stop(w.deadNode); err != nil {
			return err
		}
		if err := w.await("the node's NoExecute unreachable taint", func() bool {
			n, ok := w.s.View.Nodes.GetIndexer().GetByKey(w.deadNode)
			return ok && slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
				return t.Key == api.TaintUnreachable && t.Effect == corev1.TaintEffectNoExecute
			})
		}); err != nil {
			return err
		}
		if err := w.await("every pod on a live node, all available", func() bool {
			return w.podsPerNode()[w.deadNode] == 0 && w.rolledOut("default", "web", int32(w.sn.ScaleTo)) &&
				len(w.podsOf("default", "web")) == w.sn.ScaleTo
		}); err != nil {
			return err
		}
		w.r.Printf("check: %s has no pods; %d available on the other nodes", w.deadNode, w.sn.ScaleTo)
		_, err := w.kubectl(4, "get", "nodes")
		return err
	}},
	{Title: "the leading controller manager is killed mid-rollout; the standby finishes it, no pod duplicated or lost", Run: func(w *walk) error {
		w.web.resetPeak()
		if _, err := w.kubectl(3, "set", "image", "deployment/web", "nginx=nginx:1.29"); err != nil {
			return err
		}
		if err := w.await("the rollout under way", func() bool {
			d := w.deployment("default", "web")
			return d != nil && d.Status.UpdatedReplicas > 0 && d.Status.UpdatedReplicas < int32(w.sn.ScaleTo)
		}); err != nil {
			return err
		}
		lead := w.s.Leader()
		if lead < 0 {
			return errors.New("no leader")
		}
		d := w.deployment("default", "web")
		w.r.Printf("killing %s (the leader) with %d of %d pods updated", w.s.Replicas[lead].Name, d.Status.UpdatedReplicas, w.sn.ScaleTo)
		w.s.Kill(lead)
		standby := 1 - lead
		if err := w.await("the standby elected", func() bool { return w.s.Replicas[standby].CM.Manager.IsLeader() }); err != nil {
			return err
		}
		w.r.Printf("%s leads now", w.s.Replicas[standby].Name)
		if err := w.rolloutStatus("web"); err != nil {
			return err
		}
		if err := w.expectImage(w.sn.ScaleTo, "nginx:1.29"); err != nil {
			return err
		}
		made := w.web.created("nginx:1.29")
		w.r.Printf("check: %d pods of nginx:1.29 were ever created for %d replicas", made, w.sn.ScaleTo)
		if made != w.sn.ScaleTo {
			return fmt.Errorf("%d pods of the new template created for %d replicas: duplicates", made, w.sn.ScaleTo)
		}
		return w.peakWithin(w.sn.ScaleTo)
	}},
	{Title: "kubectl delete deployment web cascades (background): its ReplicaSets and pods are collected", Run: func(w *walk) error {
		uid := string(w.deployment("default", "web").UID)
		rss, pods := len(w.replicaSetsOf("default", "web")), len(w.podsOf("default", "web"))
		if _, err := w.kubectl(3, "delete", "deployment", "web"); err != nil {
			return err
		}
		defer w.r.Printf("check: the garbage collector deleted web's %d replicasets and %d pods", rss, pods)
		return w.await("web's replicasets and pods gone", func() bool {
			for _, rs := range w.s.View.ReplicaSets.GetStore().List() {
				if controlledBy(rs, uid) {
					return false
				}
			}
			return !slices.ContainsFunc(w.s.View.Pods.GetStore().List(), func(p *corev1.Pod) bool { return p.Labels["app"] == "web" })
		})
	}},
	{Title: "kubectl delete --cascade=foreground: the Deployment goes after its pods", Run: func(w *walk) error {
		if _, err := w.kubectl(3, "create", "deployment", "api", "--image=busybox", "--replicas=3"); err != nil {
			return err
		}
		if err := w.rolloutStatus("api"); err != nil {
			return err
		}
		if _, err := w.kubectl(3, "delete", "deployment", "api", "--cascade=foreground"); err != nil {
			return err
		}
		// kubectl waited for the Deployment to go: its dependents went first.
		var pods corev1.PodList
		if err := w.s.Client.List(w.ctx, api.Pods, "default", &pods); err != nil {
			return err
		}
		var rss appsv1.ReplicaSetList
		if err := w.s.Client.List(w.ctx, api.ReplicaSets, "default", &rss); err != nil {
			return err
		}
		left := 0
		for _, p := range pods.Items {
			if p.Labels["app"] == "api" {
				left++
			}
		}
		for _, rs := range rss.Items {
			if rs.Labels["app"] == "api" {
				left++
			}
		}
		w.r.Printf("check: %d pods or replicasets of api left when its Deployment was gone", left)
		if left != 0 {
			return fmt.Errorf("%d dependents outlived the foreground deletion", left)
		}
		return nil
	}},
}
