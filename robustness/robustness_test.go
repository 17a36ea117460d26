package robustness

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// Flags of TestRobustness. Without them it is the short run of make test
// (fixed seed, every fault kind); make robustness sets them for a soak:
//
//	go test ./robustness -run 'TestRobustness$' -robustness.duration=30m -robustness.seed=7
var (
	durationFlag = flag.Duration("robustness.duration", 0,
		"traffic duration of TestRobustness (0: the short run, "+shortDuration.String()+")")
	seedFlag = flag.Uint64("robustness.seed", 0, "seed of TestRobustness (0: 1 for the short run, the clock for a soak)")
	outFlag  = flag.String("robustness.out", "", "directory for a failing run's history and visualisation (\"\": a new temporary directory)")
)

// shortDuration is the short run's traffic at least; it goes on until
// every fault kind was injected once (about 25 s).
const shortDuration = 10 * time.Second

// TestRobustness drives traffic through three cacher replicas over the
// three-member etcd while every fault kind is injected, then checks the
// history; it wants no violation, and every fault injected and repaired.
// On failure it prints the seed and writes the history (JSON) and
// porcupine's visualisation of the first non-linearizable key.
func TestRobustness(t *testing.T) {
	cfg := runConfig{Seed: 1, Duration: shortDuration, Replicas: 3, Clients: 6, Watchers: 4, Keys: 8,
		Faults: allFaults, FaultPause: 500 * time.Millisecond}
	if *durationFlag > 0 {
		cfg.Duration, cfg.Clients, cfg.Watchers, cfg.Keys, cfg.FaultPause = *durationFlag, 8, 6, 12, 3*time.Second
		cfg.Seed = uint64(time.Now().UnixNano())
	}
	if *seedFlag != 0 {
		cfg.Seed = *seedFlag
	}
	t.Logf("seed %d, %v of traffic", cfg.Seed, cfg.Duration)
	r, res := execute(t, cfg)
	t.Logf("result (go test ./robustness -run 'TestRobustness$' -robustness.duration=%v -robustness.seed=%d):\n%s",
		cfg.Duration, cfg.Seed, res.table())
	for _, f := range res.faults {
		t.Logf("fault %s on %s: %v to %v %s", f.Kind, f.Target, f.Start.Round(time.Millisecond), f.End.Round(time.Millisecond), f.Err)
	}
	survived := map[faultKind]bool{}
	for _, f := range res.faults {
		survived[f.Kind] = survived[f.Kind] || f.Err == ""
	}
	for _, k := range cfg.Faults {
		if !survived[k] {
			res.add(checkHistory, nil, fmt.Sprintf("fault %s was never injected and repaired", k))
		}
	}
	if len(res.undecided) > 0 {
		res.add(checkHistory, nil, fmt.Sprintf("porcupine could not decide keys %v in time", res.undecided))
	}
	if len(res.violations) == 0 {
		return
	}
	for i, v := range res.violations {
		if i == 20 {
			t.Errorf("... and %d more", len(res.violations)-20)
			break
		}
		t.Errorf("%s at %v: %s\n\t%s", v.Check, v.At.Round(time.Millisecond), v.What, v.Op)
	}
	dir, err := r.writeArtifacts(res, *outFlag)
	if err != nil {
		t.Errorf("writing the history: %v", err)
	}
	t.Errorf("seed %d failed; history and visualisation in %s; replay with -robustness.seed=%d -robustness.duration=%v",
		cfg.Seed, dir, cfg.Seed, cfg.Duration)
}

// writeArtifacts writes history.json (every request, watch start, fault
// and violation) and, for the first non-linearizable key, porcupine's
// visualisation (linearizability-<key>.html).
func (r *run) writeArtifacts(res *result, dir string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", fmt.Sprintf("listwatch-robustness-%d-", r.cfg.Seed))
		if err != nil {
			return "", err
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	r.mu.Lock()
	type watchDump struct {
		ID, Watcher, Replica, ResumeOf int
		Call                           time.Duration
		Start                          uint64
		Label                          string
		Closed                         bool
		Events                         []string
	}
	var watches []watchDump
	for _, w := range r.watches {
		d := watchDump{ID: w.ID, Watcher: w.Watcher, Replica: w.Replica, ResumeOf: w.ResumeOf, Call: w.Call,
			Start: w.Rec.Start, Label: w.Rec.Label, Closed: w.Rec.Closed}
		for _, ev := range w.Rec.Events {
			d.Events = append(d.Events, describeEvent(ev))
		}
		watches = append(watches, d)
	}
	dump := struct {
		Seed        uint64
		Ops         []*op
		WatchStarts []*op
		Watches     []watchDump
		Faults      []faultRecord
		Violations  []violation
	}{r.cfg.Seed, r.rec.all(), r.watchStarts, watches, res.faults, res.violations}
	b, err := json.MarshalIndent(dump, "", " ")
	r.mu.Unlock()
	if err != nil {
		return dir, err
	}
	if err := os.WriteFile(filepath.Join(dir, "history.json"), b, 0o644); err != nil {
		return dir, err
	}
	if err := os.WriteFile(filepath.Join(dir, "replicas.log"), r.log.bytes(), 0o644); err != nil {
		return dir, err
	}
	if len(res.badKeys) > 0 {
		k := res.badKeys[0]
		hist := modelOps(r.rec.all(), r.keys, res.truth)[k]
		_, info := porcupine.CheckOperationsVerbose(keyModel, hist, time.Minute)
		name := filepath.Join(dir, "linearizability-"+filepath.Base(k)+".html")
		if err := porcupine.VisualizePath(keyModel, info, name); err != nil {
			return dir, err
		}
	}
	return dir, nil
}
