package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// capacityPrefix starts the names of the capacity steps
// (BenchmarkPeerCapacity): PeerCapacity/Watchers=W/Rate=R once the backend
// and run are taken out.
const capacityPrefix = "PeerCapacity/Watchers="

// harness is the backend name of the harness's own run (harnessSource).
const harness = "harness"

// isCapacity reports whether bench is a step of the capacity search.
func isCapacity(bench string) bool { return strings.HasPrefix(bench, capacityPrefix) }

// hasCapacity reports whether any capacity step was read.
func (t *table) hasCapacity() bool {
	for k := range t.samples {
		if isCapacity(k.bench) {
			return true
		}
	}
	return false
}

// capacityStep parses a capacity step's name into its watchers and rate.
func capacityStep(bench string) (watchers, rate int, ok bool) {
	rest, found := strings.CutPrefix(bench, capacityPrefix)
	if !found {
		return 0, 0, false
	}
	w, r, found := strings.Cut(rest, "/Rate=")
	if !found {
		return 0, 0, false
	}
	watchers, err1 := strconv.Atoi(w)
	rate, err2 := strconv.Atoi(r)
	return watchers, rate, err1 == nil && err2 == nil
}

// capacityWatchers are the watcher counts of the capacity steps read,
// ascending.
func (t *table) capacityWatchers() []int {
	seen := map[int]bool{}
	for k := range t.samples {
		if w, _, ok := capacityStep(k.bench); ok {
			seen[w] = true
		}
	}
	var out []int
	for w := range seen {
		out = append(out, w)
	}
	sort.Ints(out)
	return out
}

// stepRates are the rates at which backend ran a step with watchers in
// run, ascending.
func (t *table) stepRates(watchers, run int, backend string) []int {
	var out []int
	for k := range t.samples {
		if w, r, ok := capacityStep(k.bench); ok && w == watchers && k.run == run && k.backend == backend && k.metric == "held" {
			out = append(out, r)
		}
	}
	sort.Ints(out)
	return out
}

// stepValue is metric of backend's step at rate.
func (t *table) stepValue(watchers, rate, run int, backend, metric string) (float64, bool) {
	return t.sample(fmt.Sprintf("%s%d/Rate=%d", capacityPrefix, watchers, rate), run, backend, metric)
}

// held reports whether backend's step at rate held.
func (t *table) held(watchers, rate, run int, backend string) bool {
	v, ok := t.stepValue(watchers, rate, run, backend, "held")
	return ok && v == 1
}

// systemCapacity is one cache's result in one run of the search.
type systemCapacity struct {
	rate      int     // the highest rate that held (puts/s), 0 if none
	delivered float64 // events/s delivered at rate
	stopped   string  // why the next step did not hold, or "" if none failed
}

// capacityOf is backend's capacity with watchers in run.
func (t *table) capacityOf(watchers, run int, backend string) (systemCapacity, bool) {
	rates := t.stepRates(watchers, run, backend)
	if len(rates) == 0 {
		return systemCapacity{}, false
	}
	var c systemCapacity
	for _, r := range rates {
		if !t.held(watchers, r, run, backend) {
			c.stopped = t.whyNotHeld(watchers, r, run, backend)
			break
		}
		c.rate = r
		c.delivered, _ = t.stepValue(watchers, r, run, backend, "events/s")
	}
	return c, true
}

// whyNotHeld says why backend's step at rate did not hold.
func (t *table) whyNotHeld(watchers, rate, run int, backend string) string {
	var why []string
	if lost, _ := t.stepValue(watchers, rate, run, backend, "lost"); lost > 0 {
		why = append(why, fmt.Sprintf("%s of %s lost", thousands(int(lost)), thousands(watchers)))
	}
	if p99, _ := t.stepValue(watchers, rate, run, backend, "p99-ms"); p99 > 100 {
		why = append(why, fmt.Sprintf("p99 %.0f ms", p99))
	}
	if w, _ := t.stepValue(watchers, rate, run, backend, "write/s"); w < 0.95*float64(rate) {
		why = append(why, fmt.Sprintf("writer reached %.0f/s", w))
	}
	return fmt.Sprintf("at %d/s: %s", rate, strings.Join(why, ", "))
}

// equalLoad is the CPU per delivered event of the two caches and the
// harness at the highest rate both caches held.
type equalLoad struct {
	rate          int
	lw, k8s, hrns float64
	hasHarness    bool
}

// ratio is listwatch's CPU per event over Kubernetes'.
func (e equalLoad) ratio() float64 { return e.lw / e.k8s }

// netRatio is the same ratio with the harness's CPU per event taken from
// both, so that it compares what the caches add.
func (e equalLoad) netRatio() (float64, bool) {
	if !e.hasHarness || e.k8s <= e.hrns {
		return 0, false
	}
	return (e.lw - e.hrns) / (e.k8s - e.hrns), true
}

// equalLoadOf is the equal-load comparison with watchers in run.
func (t *table) equalLoadOf(watchers, run int) (equalLoad, bool) {
	rate := 0
	for _, r := range t.stepRates(watchers, run, lwCache) {
		if t.held(watchers, r, run, lwCache) && t.held(watchers, r, run, k8sCache) {
			rate = r
		}
	}
	if rate == 0 {
		return equalLoad{}, false
	}
	e := equalLoad{rate: rate}
	var okL, okK bool
	e.lw, okL = t.stepValue(watchers, rate, run, lwCache, "cpu-ns/event")
	e.k8s, okK = t.stepValue(watchers, rate, run, k8sCache, "cpu-ns/event")
	e.hrns, e.hasHarness = t.stepValue(watchers, rate, run, harness, "cpu-ns/event")
	return e, okL && okK && e.k8s > 0
}

// capacityCell is one cache's capacity as the table shows it.
func capacityCell(c systemCapacity, ok bool) string {
	if !ok {
		return "-"
	}
	text := "none held"
	if c.rate > 0 {
		text = fmt.Sprintf("%.0fk (%d/s)", c.delivered/1000, c.rate)
	}
	if c.stopped != "" {
		text += "; stopped " + c.stopped
	} else {
		text += "; top of the ladder"
	}
	return text
}

// printCapacity writes the capacity table: per watcher count and run, each
// cache's capacity and why it stopped, their ratio, and the CPU per
// delivered event at the highest rate both held, with the harness's own.
func (t *table) printCapacity(w io.Writer) {
	fmt.Fprintf(w, "Fan-out capacity (BenchmarkPeerCapacity): the most events/s a cache delivered with every watcher getting every"+
		" event and p99 ≤ 100 ms, climbing a ladder of paced write rates (puts/s in brackets). CPU per delivered event is the"+
		" process's CPU over the step divided by the events delivered, at the highest rate both caches held; the harness's is"+
		" that of a trivial source (one etcd watch, one decode, a channel send per watcher) with the same writer, etcd and"+
		" watchers, and the net ratio takes it from both. The harness climbs the ladder too: its capacity is what a source that"+
		" does nothing but hand each event to each reader reaches with these readers on this machine (not a bound: it wakes"+
		" each reader for each event), and its ratio to Kubernetes' is beside it.\n\n")
	fmt.Fprintf(w, "| watchers | run | listwatch capacity | Kubernetes capacity | ratio | harness capacity | harness × Kubernetes' | equal load | CPU/event listwatch | Kubernetes | harness | ratio | net of harness |\n")
	fmt.Fprintf(w, "|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, watchers := range t.capacityWatchers() {
		for run := 1; run <= max(1, t.runs()); run++ {
			lw, okL := t.capacityOf(watchers, run, lwCache)
			k, okK := t.capacityOf(watchers, run, k8sCache)
			if !okL && !okK {
				continue
			}
			ratio := "-"
			if okL && okK && lw.rate > 0 && k.rate > 0 && k.delivered > 0 {
				ratio = fmt.Sprintf("%.2f×", lw.delivered/k.delivered)
			}
			h, okH := t.capacityOf(watchers, run, harness)
			harnessCell, harnessRatio := "-", "-"
			if okH {
				harnessCell = capacityCell(h, true)
				if okK && h.rate > 0 && k.rate > 0 && k.delivered > 0 {
					harnessRatio = fmt.Sprintf("%.2f×", h.delivered/k.delivered)
				}
			}
			load, cpuL, cpuK, cpuH, cpuRatio, net := "-", "-", "-", "-", "-", "-"
			if e, ok := t.equalLoadOf(watchers, run); ok {
				load = fmt.Sprintf("%d/s", e.rate)
				cpuL, cpuK = fmt.Sprintf("%.2f µs", e.lw/1000), fmt.Sprintf("%.2f µs", e.k8s/1000)
				cpuRatio = fmt.Sprintf("%.2f×", e.ratio())
				if e.hasHarness {
					cpuH = fmt.Sprintf("%.2f µs", e.hrns/1000)
				}
				if n, ok := e.netRatio(); ok {
					net = fmt.Sprintf("%.2f×", n)
				}
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", thousands(watchers), run,
				capacityCell(lw, okL), capacityCell(k, okK), ratio, harnessCell, harnessRatio, load, cpuL, cpuK, cpuH, cpuRatio, net)
		}
	}
}
