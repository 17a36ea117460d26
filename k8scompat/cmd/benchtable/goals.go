package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// sampleKey names one measured value: a benchmark (its backend and run
// taken out of the name), the run, the backend and the metric.
type sampleKey struct {
	bench   string
	run     int
	backend string
	metric  string
}

// sample is the value of metric for backend in one run of bench.
func (t *table) sample(bench string, run int, backend, metric string) (float64, bool) {
	v, ok := t.samples[sampleKey{bench: bench, run: run, backend: backend, metric: metric}]
	return v, ok
}

// runRatio is listwatch's cacher over Kubernetes' cacher for metric in one
// run of bench.
func (t *table) runRatio(bench string, run int, metric string) (ratio, lw, k8s float64, ok bool) {
	a, okA := t.sample(bench, run, lwCache, metric)
	b, okB := t.sample(bench, run, k8sCache, metric)
	if !okA || !okB || b == 0 {
		return 0, a, b, false
	}
	return a / b, a, b, true
}

// runs is the highest run number seen.
func (t *table) runs() int {
	n := 0
	for k := range t.samples {
		n = max(n, k.run)
	}
	return n
}

// hasPeer reports whether any peer benchmark result was read.
func (t *table) hasPeer() bool {
	for k := range t.samples {
		if strings.HasPrefix(k.bench, "Peer") {
			return true
		}
	}
	return false
}

// objectCounts are the N of the benchmarks named prefix+N+..., ascending.
func (t *table) objectCounts(prefix string) []int {
	seen := map[int]bool{}
	for k := range t.samples {
		if rest, ok := strings.CutPrefix(k.bench, prefix); ok {
			n, err := strconv.Atoi(strings.SplitN(rest, "/", 2)[0])
			if err == nil {
				seen[n] = true
			}
		}
	}
	var out []int
	for n := range seen {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// runCell is one run's measure of a goal.
type runCell struct {
	text     string
	measured bool
	met      bool
	// noRatio is set when a cache ended watches, so that the run's ratio
	// compares different work; such a run does not meet the goal.
	noRatio bool
}

// goalRow is one row of the goals table: either a measure per run, or a
// note (a goal another target measures, or one this run did not measure).
type goalRow struct {
	goal, measure, target string
	cells                 []runCell
	note                  string
	// unjudged, if set, is why the runs give no verdict on this goal.
	unjudged string
}

// verdict is "MET (3 of 3)" when every run met the target, else
// "MISSED (m of n)" with the runs that met it.
func (g goalRow) verdict() string {
	if g.note != "" {
		return g.note
	}
	measured, met, noRatio := 0, 0, 0
	for _, c := range g.cells {
		if c.measured {
			measured++
		}
		if c.measured && c.met {
			met++
		}
		if c.noRatio {
			noRatio++
		}
	}
	switch {
	case measured == 0:
		return "not measured in this run"
	case g.unjudged != "":
		return "not judged: " + g.unjudged
	case met == len(g.cells):
		return fmt.Sprintf("**MET** (%d of %d)", met, len(g.cells))
	case noRatio > 0:
		return fmt.Sprintf("**MISSED** (%d of %d met; %d without a ratio)", met, len(g.cells), noRatio)
	default:
		return fmt.Sprintf("**MISSED** (%d of %d met)", met, len(g.cells))
	}
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// configValue is the first value of a configuration line, or def.
func (t *table) configValue(key, def string) string {
	if v := t.config[key]; len(v) > 0 {
		return v[0]
	}
	return def
}

// goals are issue 25's goals as this input measures them.
func (t *table) goals() []goalRow {
	var unjudged string
	if mode := t.configValue("peer-listwatch-mode", "default"); mode != "default" {
		unjudged = "goal 1 is for the default mode; listwatch ran " + mode
	}
	var rows []goalRow
	// G1: memory (judged on pods with a padding of their own) and lists,
	// in the mode listwatch ran in.
	for _, n := range t.objectCounts("PeerMemory/Objects=") {
		rows = append(rows, t.memoryGoal(n, unjudged))
	}
	listCounts := t.objectCounts("PeerList/Objects=")
	for _, n := range listCounts {
		for _, mode := range []struct{ name, label string }{{"RV=0", `RV "0"`}, {"RV=consistent", "consistent"}} {
			g := t.listGoal("G1", n, mode.name, mode.label, 0.5)
			g.unjudged = unjudged
			rows = append(rows, g)
		}
	}
	// G2: consistent lists.
	for _, target := range []struct {
		n   int
		max float64
	}{{10000, 0.5}, {50000, 0.25}} {
		rows = append(rows, t.listGoal("G2", target.n, "RV=consistent", "consistent", target.max))
	}
	// G3: fan-out capacity, as issue 36 sets it.
	for _, watchers := range []int{1000, 10000} {
		rows = append(rows, t.capacityGoal(watchers, 3, 0.5))
	}
	rows = append(rows,
		goalRow{goal: "G4", measure: "HTTP watches: ≤ 1 goroutine per streaming watch (0 parked), one encoding per event, 100,000 HTTP watchers",
			target: "see measure", note: "measured by `make bench-scale-http SCALE_HTTP_WATCHERS=100000`, not here"},
		goalRow{goal: "G5", measure: "Kubernetes' RunBenchmarkStoreList / WriteThroughput on the cacher",
			target: "every StoreList row ≥ 1.0, geomean ≥ 1.5", note: "measured by `make bench-k8s`: its table ends with the verdict"})
	return rows
}

// listGoal is a goal on listwatch's list time as a multiple of Kubernetes'
// (the median ms/list of each) for n pods listed as mode.
func (t *table) listGoal(goal string, n int, mode, label string, maxRatio float64) goalRow {
	bench := fmt.Sprintf("PeerList/Objects=%d/%s", n, mode)
	g := goalRow{goal: goal, measure: fmt.Sprintf("LIST %s pods, %s: listwatch's time / Kubernetes'", thousands(n), label),
		target: fmt.Sprintf("≤ %.2f", maxRatio)}
	measured := false
	for r := 1; r <= max(1, t.runs()); r++ {
		ratio, lw, k8s, ok := t.runRatio(bench, r, "ms/list")
		c := runCell{measured: ok, met: ok && ratio <= maxRatio, text: "-"}
		if ok {
			c.text = fmt.Sprintf("%.2f (%.1f / %.1f ms)", ratio, lw, k8s)
			measured = true
		}
		g.cells = append(g.cells, c)
	}
	if !measured {
		g.note = fmt.Sprintf("not measured: needs K8SBENCH_PEER_OBJECTS giving %s pods and list mode %s", thousands(n), mode)
	}
	return g
}

// capacityGoal is the fan-out goal (issue 36) with watchers: listwatch's
// capacity at least minRatio times Kubernetes', and its CPU per delivered
// event at equal offered load, net of the harness's, at most maxCPU times
// Kubernetes' (the raw ratio when the harness did not run).
func (t *table) capacityGoal(watchers int, minRatio, maxCPU float64) goalRow {
	g := goalRow{goal: "G3", measure: fmt.Sprintf("FAN-OUT CAPACITY %s watchers: listwatch's capacity × Kubernetes' · CPU per delivered event at equal load × Kubernetes', net of the harness (raw)",
		thousands(watchers)), target: fmt.Sprintf("≥ %.0f× · ≤ %.1f×", minRatio, maxCPU)}
	measured := false
	for r := 1; r <= max(1, t.runs()); r++ {
		lw, okL := t.capacityOf(watchers, r, lwCache)
		k, okK := t.capacityOf(watchers, r, k8sCache)
		c := runCell{measured: okL && okK, text: "-"}
		if c.measured {
			measured = true
			switch {
			case k.rate == 0 || lw.rate == 0:
				c.noRatio = true
				c.text = fmt.Sprintf("no ratio: a cache held no rate (listwatch %s, Kubernetes %s)", capacityCell(lw, true), capacityCell(k, true))
			default:
				ratio := lw.delivered / k.delivered
				c.text = fmt.Sprintf("%.2f× (%.0fk / %.0fk)", ratio, lw.delivered/1000, k.delivered/1000)
				cpuOK := false
				if e, ok := t.equalLoadOf(watchers, r); ok {
					cpu := e.ratio()
					if n, ok := e.netRatio(); ok {
						cpu = n
						c.text += fmt.Sprintf(" · %.2f× (%.2f×) at %d/s", n, e.ratio(), e.rate)
					} else {
						c.text += fmt.Sprintf(" · (%.2f×) at %d/s", e.ratio(), e.rate)
					}
					cpuOK = cpu <= maxCPU
				}
				c.met = ratio >= minRatio && cpuOK
			}
		}
		g.cells = append(g.cells, c)
	}
	if !measured {
		g.note = fmt.Sprintf("not measured: add %d to K8SBENCH_PEER_CAPACITY_WATCHERS", watchers)
	}
	return g
}

// printGoals writes the goals table with one column per run.
func (t *table) printGoals(w io.Writer) {
	runs := max(1, t.runs())
	fmt.Fprintf(w, "Issue 25's goals, listwatch's cacher against Kubernetes' in the same run: %d run(s), each measuring both caches"+
		" (listwatch first in odd runs, Kubernetes first in even ones); listwatch's cacher in mode %s; codec %s;"+
		" %s pods, %s updates per fan-out; padding of the lists' and fan-outs' pods %s (memory measures both)\n\n",
		runs, t.configValue("peer-listwatch-mode", "?"), t.configValue("peer-codec", "?"),
		t.configValue("peer-objects", "?"), t.configValue("peer-updates", "?"), t.configValue("peer-padding", "?"))
	fmt.Fprintf(w, "| goal | measure | target |")
	for r := 1; r <= runs; r++ {
		fmt.Fprintf(w, " run %d |", r)
	}
	fmt.Fprintf(w, " verdict |\n|---|---|---|%s---|\n", strings.Repeat("---:|", runs))
	for _, g := range t.goals() {
		fmt.Fprintf(w, "| %s | %s | %s |", g.goal, g.measure, g.target)
		for r := range runs {
			text := "—"
			if r < len(g.cells) && g.note == "" {
				text = g.cells[r].text
			}
			fmt.Fprintf(w, " %s |", text)
		}
		fmt.Fprintf(w, " %s |\n", g.verdict())
	}
}
