package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
)

// newCacherEnv builds the listwatch cacher over the listwatch etcd store of
// newEtcdEnv, runs it until t ends, waits until it has loaded the resource,
// and puts the adapter over the cacher.
func newCacherEnv(t *testing.T, srv *embedtest.Server, opts envOptions) *env {
	t.Helper()
	e := newEtcdEnv(t, srv, opts)
	c, err := cacher.New(cacher.Config{
		Storage:        e.lw,
		ResourcePrefix: "/pods",
		NewFunc:        e.newPod,
		NewListFunc:    e.newPodList,
		GetAttrs:       podAttrs,
		IndexFields:    []string{"spec.nodeName"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("cacher.Run: %v", err)
		}
	})
	readyCtx, readyCancel := context.WithTimeout(ctx, 30*time.Second)
	defer readyCancel()
	if err := c.WaitReady(readyCtx); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
	e.store = mustAdapter(t, c)
	e.cached = true
	return e
}

// podAttrs is the attribute function of Kubernetes' cacher tests
// (GetPodAttrs): the labels, and the fields the pod registry makes selectable.
func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod, ok := obj.(*example.Pod)
	if !ok {
		return nil, nil, fmt.Errorf("not a pod: %T", obj)
	}
	return labels.Set(pod.Labels), fields.Set{
		"spec.nodeName":      pod.Spec.NodeName,
		"spec.restartPolicy": string(pod.Spec.RestartPolicy),
		"status.phase":       string(pod.Status.Phase),
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
	}, nil
}

// TestCacher runs the upstream suite against listwatch's cacher.
func TestCacher(t *testing.T) {
	runSuite(t, cacherBackend, newCacherEnv)
}
