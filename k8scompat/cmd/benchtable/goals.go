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
	// G3: fan-out.
	for _, target := range []struct {
		watchers int
		min      float64
	}{{1000, 3}, {10000, 2}} {
		rows = append(rows, t.fanoutGoal(target.watchers, target.min))
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

// fanoutGoal is goal 3 for the unpaced fan-out to watchers: listwatch's
// events/s at least minRatio times Kubernetes' with a p99 at most
// Kubernetes', neither cache ending a watch.
func (t *table) fanoutGoal(watchers int, minRatio float64) goalRow {
	bench := t.fanoutBench(watchers)
	updates := ""
	if _, u, ok := strings.Cut(bench, "/Updates="); ok {
		updates = " × " + u + " updates"
	}
	g := goalRow{goal: "G3", measure: fmt.Sprintf("FANOUT %s watchers%s, writer unpaced: events/s × Kubernetes' · p99 × Kubernetes' · CPU per delivered event (× Kubernetes')",
		thousands(watchers), updates), target: fmt.Sprintf("≥ %.0f× at p99 ≤ 1×", minRatio)}
	measured := false
	for r := 1; r <= max(1, t.runs()); r++ {
		rate, _, _, okRate := t.runRatio(bench, r, "events/s")
		p99, _, _, okP99 := t.runRatio(bench, r, "p99-ms")
		cpuRatio, cpu, _, okCPU := t.runRatio(bench, r, "cpu-ns/event")
		c := runCell{measured: okRate && okP99, text: "-"}
		if c.measured {
			measured = true
			c.met = rate >= minRatio && p99 <= 1
			c.text = fmt.Sprintf("%.2f× · p99 %.2f×", rate, p99)
			if okCPU {
				c.text += fmt.Sprintf(" · %.1f µs (%.2f×)", cpu/1000, cpuRatio)
			}
			for _, be := range []struct{ name, label string }{{lwCache, "listwatch"}, {k8sCache, "k8s"}} {
				if n, ok := t.sample(bench, r, be.name, "terminated"); ok && n > 0 {
					c.met, c.noRatio = false, true
					c.text += fmt.Sprintf("; no ratio: %s ended %.0f of %d watches", be.label, n, watchers)
				}
			}
		}
		g.cells = append(g.cells, c)
	}
	if !measured {
		g.note = fmt.Sprintf("not measured: add %d to K8SBENCH_PEER_WATCHERS", watchers)
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

// fanoutBench is the unpaced fan-out to watchers: the one of
// K8SBENCH_PEER_WATCHERS, else the wide one (Wide/..., with its own number
// of updates).
func (t *table) fanoutBench(watchers int) string {
	name := fmt.Sprintf("PeerFanout/Writer=max/Watchers=%d", watchers)
	wide := fmt.Sprintf("PeerFanout/Wide/Writer=max/Watchers=%d/", watchers)
	found := ""
	for k := range t.samples {
		if k.bench == name {
			return name
		}
		if strings.HasPrefix(k.bench, wide) && (found == "" || k.bench < found) {
			found = k.bench
		}
	}
	if found == "" {
		return name
	}
	return found
}
