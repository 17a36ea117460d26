package demo

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
)

// TestDemoWithKubectl plays the whole make demo-cluster scenario, small
// (6 replicas scaled to 8), with the real kubectl: rollout status, set
// image, rollout undo, scale, a node's pods evicted and replaced, the
// leading controller manager killed mid-rollout with no pod duplicated
// or lost, and cascading deletes (background and foreground).
func TestDemoWithKubectl(t *testing.T) {
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var o Options
	o.Client, o.Prefix = etcdServer.Client, apitest.Prefix(t, etcdServer.Client)
	var out bytes.Buffer
	err := Run(ctx, &out, o, Scenario{Replicas: 6, ScaleTo: 8})
	t.Log(out.String())
	require.NoError(t, err)
	require.Contains(t, out.String(), "all 8 steps held")
	require.Contains(t, out.String(), "successfully rolled out")
}
