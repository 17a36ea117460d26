package demo

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
)

// imageOverlap watches web's pods and records whether pods of two
// images were ever alive at once.
type imageOverlap struct {
	mu      sync.Mutex
	alive   map[string]string // pod key → image
	overlap bool
}

func (o *imageOverlap) observe(p *corev1.Pod, deleted bool) {
	if p.Labels["app"] != "web" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	key := p.Namespace + "/" + p.Name
	if deleted {
		delete(o.alive, key)
		return
	}
	o.alive[key] = p.Spec.Containers[0].Image
	for _, img := range o.alive {
		if img != p.Spec.Containers[0].Image {
			o.overlap = true
		}
	}
}

// TestRecreateAndPause: a Recreate Deployment replaces its pods with no
// pod of the old template alive once a new one exists; a paused
// Deployment does not roll a new template (Progressing Unknown,
// DeploymentPaused) but still scales, and rolls once resumed.
func TestRecreateAndPause(t *testing.T) {
	s := startStack(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc := &script{ctx: ctx, s: s}
	ov := &imageOverlap{alive: map[string]string{}}
	reg, err := s.View.Pods.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { ov.observe(p, false) },
		UpdateFunc: func(_, p *corev1.Pod) { ov.observe(p, false) },
		DeleteFunc: func(p *corev1.Pod, _ bool) { ov.observe(p, true) },
	})
	require.NoError(t, err)
	defer func() { _ = s.View.Pods.RemoveEventHandler(reg) }()
	mutate := func(f func(d *appsv1.Deployment)) {
		_, err := api.Mutate(ctx, s.Client, api.Deployments, "default", "web", newDeployment, func(d *appsv1.Deployment) (bool, error) {
			f(d)
			return true, nil
		})
		require.NoError(t, err)
	}

	d := webDeployment(4, "nginx:1")
	d.Spec.Strategy.Type = appsv1.RecreateDeploymentStrategyType
	require.NoError(t, s.Client.Create(ctx, api.Deployments, d))
	require.NoError(t, sc.await("4 available", func() bool { return sc.rolledOut("default", "web", 4) }))
	mutate(func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:2" })
	require.NoError(t, sc.await("recreated with nginx:2", func() bool {
		return sc.rolledOut("default", "web", 4) && sc.podsWithImage("default", "web", "nginx:2") == 4 &&
			len(sc.podsOf("default", "web")) == 4
	}))
	ov.mu.Lock()
	require.False(t, ov.overlap, "pods of both templates alive at once under Recreate")
	ov.mu.Unlock()

	// Pause, change the template and the count: it scales, does not roll.
	mutate(func(d *appsv1.Deployment) {
		d.Spec.Paused = true
		d.Spec.Template.Spec.Containers[0].Image = "nginx:3"
		n := int32(6)
		d.Spec.Replicas = &n
	})
	require.NoError(t, sc.await("paused and scaled to 6 of nginx:2", func() bool {
		d := sc.deployment("default", "web")
		c := rollout.Condition(d.Status, appsv1.DeploymentProgressing)
		return c != nil && c.Reason == rollout.ReasonPaused && d.Status.ObservedGeneration >= d.Generation &&
			sc.podsWithImage("default", "web", "nginx:2") == 6 && d.Status.AvailableReplicas == 6
	}))
	require.Zero(t, sc.podsWithImage("default", "web", "nginx:3"), "a paused Deployment rolled")
	mutate(func(d *appsv1.Deployment) { d.Spec.Paused = false })
	require.NoError(t, sc.await("resumed and rolled to nginx:3", func() bool {
		return sc.rolledOut("default", "web", 6) && sc.podsWithImage("default", "web", "nginx:3") == 6 &&
			len(sc.podsOf("default", "web")) == 6
	}))
}
