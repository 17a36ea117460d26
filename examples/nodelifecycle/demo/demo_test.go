package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// TestDemoShort plays the whole scenario of make demo-nodes on a fake
// clock that Run steps (grace 1.5 s, tolerationSeconds 2, rate 4/s) and
// checks that every step holds and that the narration shows Unknown nodes,
// NoExecute taints, evictions, leases and RVs. The clock moves only when
// the cluster has done everything due, so a loaded machine makes the test
// slower, never different: its waits are bounded on that clock, and a
// part that stays busy for StepTimeout of real time fails it.
func TestDemoShort(t *testing.T) {
	ctx := t.Context()
	var out bytes.Buffer
	o := DefaultOptions
	o.Client, o.Prefix = etcdServer.Client, apitest.Prefix(t, etcdServer.Client)
	o.Clock = workqueuetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	o.Renew, o.Grace, o.Monitor, o.TolerationSeconds = 150*time.Millisecond, 1500*time.Millisecond, 100*time.Millisecond, 2
	o.Zones, o.Rates.Normal = 2, 4
	err := Run(ctx, &out, o)
	require.NoError(t, err, out.String())
	s := out.String()
	for _, want := range []string{"NodeReady=Unknown", "unreachable:NoExecute rv=", "evicted pod default/node-a0-plain-1",
		"tolerated it for 2s", "lease kube-node-lease/node-a0 rv=", "2 pending evictions cancelled",
		"zone-a FullDisruption rate=4/s", "AllZonesDisrupted", "no eviction and no NoExecute taint", "all 6 steps held"} {
		require.True(t, strings.Contains(s, want), "missing %q in:\n%s", want, s)
	}
	// Every line's stamp, elapsed seconds and clock, is at or after the
	// one before (events were stamped when they happened and printed
	// later, after newer lines).
	var prevSecs float64
	var prev time.Time
	stamped := 0
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		var secs float64
		var clock string
		_, err := fmt.Sscanf(line, "[%fs %s", &secs, &clock)
		require.NoError(t, err, "a stamp that does not read: %q", line)
		at, err := time.Parse("15:04:05.000]", clock)
		require.NoError(t, err, line)
		if secs < prevSecs || (at.Before(prev) && prev.Sub(at) < time.Hour) { // not midnight
			t.Fatalf("a stamp goes backwards at %q (previous line at %.2fs %s)", line, prevSecs, prev.Format("15:04:05.000"))
		}
		prevSecs, prev = secs, at
		stamped++
	}
	require.Greater(t, stamped, 20, "stamped lines in:\n%s", s)
}

// TestServeCommands: the serve mode's commands stop and resume nodes,
// zones or all, report the zones, and refuse nonsense.
func TestServeCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := DefaultOptions
	o.Client, o.Prefix, o.Zones, o.NodesPerZone, o.PodsPerNode = etcdServer.Client, apitest.Prefix(t, etcdServer.Client), 2, 2, 1
	s, err := Start(ctx, o)
	require.NoError(t, err)
	defer func() { require.NoError(t, s.Close()) }()
	require.Equal(t, "zone-a: heartbeats of 2 nodes stopped", command(s, "stop zone-a"))
	require.Equal(t, "node-b1: heartbeats of 1 nodes stopped", command(s, "stop node-b1"))
	require.Contains(t, command(s, "status"), "evictions pending")
	require.Equal(t, "all: heartbeats of 4 nodes resumed", command(s, "resume all"))
	require.Contains(t, command(s, "stop node-x"), "unknown node")
	require.Contains(t, command(s, "jump"), "usage")
	require.Contains(t, command(s, "status"), "evictions pending")
	require.Empty(t, command(s, "  "))
}
