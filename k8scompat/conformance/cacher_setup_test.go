package conformance

import (
	"context"
	"fmt"
	"github.com/listwatch/listwatch/k8scompat"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/apis/example"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
)

// newCacherEnv builds the store of newEtcdEnv with the cacher turned on,
// the decorator's default.
func newCacherEnv(t *testing.T, srv *embedtest.Server, opts envOptions) *env {
	return newEnv(t, srv, opts, true)
}

// waitReady waits until the cacher behind s has loaded the resource.
func waitReady(t *testing.T, s k8sstorage.Interface) {
	t.Helper()
	c, ok := s.(*k8scompat.Store).Unwrap().(*cacher.Cacher)
	if !ok {
		t.Fatalf("no cacher behind %T", s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("cacher not ready: %v", err)
	}
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
