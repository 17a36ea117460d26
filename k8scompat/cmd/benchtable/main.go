// Command benchtable reads the output of `go test -bench` over
// k8scompat/bench on stdin, echoes it, and prints a table that puts the four
// backends side by side (listwatch etcd3 vs Kubernetes etcd3, listwatch
// cacher vs Kubernetes cacher) with the ratios listwatch / Kubernetes, and
// the geometric mean of each ratio column. The tabled metrics are rates
// (writes/s, list-objs/s, watch-events/s), so a ratio above 1 means listwatch
// is faster. A benchmark measured in several runs (a /Run=N element in its
// name, as the peer benchmarks have) gets the mean of its runs in that table.
//
// Then the fan-out capacity of each cache, its ratio and the CPU per
// delivered event at equal offered load, with the harness's own
// (capacity.go). After it come issue 25's goals: for the peer benchmarks
// (make bench-peer) a table of each goal with every run's measure and
// whether it is met
// (goals.go), then the CPU profile summary of listwatch's fan-out
// (profile.go); for Kubernetes' own benchmarks (make bench-k8s) the verdict
// of goal 5 (storelist_goal.go).
//
//	go test -run '^$' -bench . ./bench | go run ./cmd/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The backends, in the column order of the table.
const (
	lwStore  = "listwatch-etcd3"
	k8sStore = "k8s-etcd3"
	lwCache  = "listwatch-cacher"
	k8sCache = "k8s-cacher"
)

var (
	backendRE = regexp.MustCompile(`/Backend=([^/\s]+)`)
	runRE     = regexp.MustCompile(`/Run=([0-9]+)`)
	// configRE matches the configuration lines the peer benchmarks print
	// ("peer-runs: 3", "peer-cpuprofile-listwatch-cacher: /tmp/...").
	configRE = regexp.MustCompile(`^(peer-[a-z0-9-]+):\s*(.*)$`)
)

// tabled are the metrics put in the table, each with whether higher is
// better: the writes, the objects listed (list-calls/s only repeats
// list-objs/s divided by the page size) and the watch events delivered of
// Kubernetes' benchmarks, and the metrics of the peer benchmarks
// (peer_test.go). ns/op is left out: the upstream benchmarks run parallel
// loads whose per-op time is not comparable. Only rates (higher is better)
// enter the geometric means.
var tabled = map[string]bool{"writes/s": true, "list-objs/s": true, "watch-events/s": true,
	"events/s": true, "p50-ms": false, "p99-ms": false, "fast-p99-ms": false, "terminated": false, "cpu-ns/event": false,
	"B/obj": false, "x-encoded": false, "ms/list": false, "cpu-ms/list": false}

// row is one (benchmark, metric) pair with a value per backend.
type row struct {
	bench, metric string
	sum           map[string]float64
	n             map[string]int
}

func (r *row) value(backend string) (float64, bool) {
	if r.n[backend] == 0 {
		return 0, false
	}
	return r.sum[backend] / float64(r.n[backend]), true
}

// table collects rows in first-seen order, and each run's values for the
// goals.
type table struct {
	rows  map[string]*row
	order []string
	// samples are the values by benchmark (backend and run taken out of the
	// name), run, backend and metric.
	samples map[sampleKey]float64
	// config holds the peer benchmarks' configuration lines, by key, in
	// order.
	config map[string][]string
}

// newTable is an empty table.
func newTable() *table {
	return &table{rows: map[string]*row{}, samples: map[sampleKey]float64{}, config: map[string][]string{}}
}

func (t *table) add(bench, metric, backend string, v float64) {
	k := bench + "\x00" + metric
	r, ok := t.rows[k]
	if !ok {
		r = &row{bench: bench, metric: metric, sum: map[string]float64{}, n: map[string]int{}}
		t.rows[k] = r
		t.order = append(t.order, k)
	}
	r.sum[backend] += v
	r.n[backend]++
}

// parseLine adds the metrics of one benchmark result line, or records one
// configuration line of the peer benchmarks.
func (t *table) parseLine(line string) {
	if m := configRE.FindStringSubmatch(line); m != nil {
		t.config[m[1]] = append(t.config[m[1]], strings.TrimSpace(m[2]))
		return
	}
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
		return
	}
	full := f[0]
	if i := strings.LastIndex(full, "-"); i > 0 {
		if _, err := strconv.Atoi(full[i+1:]); err == nil {
			full = full[:i] // GOMAXPROCS suffix
		}
	}
	m := backendRE.FindStringSubmatch(full)
	if m == nil {
		return
	}
	name := strings.TrimPrefix(strings.Replace(full, m[0], "", 1), "Benchmark")
	run := 1
	if r := runRE.FindStringSubmatch(name); r != nil {
		run, _ = strconv.Atoi(r[1])
		name = strings.Replace(name, r[0], "", 1)
	}
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			continue
		}
		unit := f[i+1]
		key := sampleKey{bench: name, run: run, backend: m[1], metric: unit}
		if isCapacity(name) {
			// The capacity steps go to their own table (capacity.go).
			t.samples[key] = v
			continue
		}
		if _, ok := tabled[unit]; !ok {
			continue
		}
		t.add(name, unit, m[1], v)
		t.samples[key] = v
	}
}

func ratio(r *row, lw, k string) (float64, string) {
	a, okA := r.value(lw)
	b, okB := r.value(k)
	if !okA || !okB || b == 0 {
		return 0, "-"
	}
	return a / b, fmt.Sprintf("%.2f", a/b)
}

func cell(r *row, backend string) string {
	v, ok := r.value(backend)
	if !ok {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// geomean of the positive values.
type geomean struct {
	logSum float64
	n      int
}

func (g *geomean) add(v float64) {
	if v > 0 {
		g.logSum += math.Log(v)
		g.n++
	}
}

// value is the geometric mean, if any value was added.
func (g geomean) value() (float64, bool) {
	if g.n == 0 {
		return 0, false
	}
	return math.Exp(g.logSum / float64(g.n)), true
}

func (g geomean) String() string {
	v, ok := g.value()
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.2f (n=%d)", v, g.n)
}

// print writes the side-by-side table and returns the geometric means of
// the rate ratios of the etcd3 stores and of the caches.
func (t *table) print(w io.Writer) (store, cache geomean) {
	keys := append([]string(nil), t.order...)
	sort.SliceStable(keys, func(i, j int) bool { return t.rows[keys[i]].bench < t.rows[keys[j]].bench })
	fmt.Fprintf(w, "| benchmark | metric | listwatch etcd3 | k8s etcd3 | ratio | listwatch cacher | k8s cacher | ratio |\n")
	fmt.Fprintf(w, "|---|---|---:|---:|---:|---:|---:|---:|\n")
	var gs, gc geomean
	for _, k := range keys {
		r := t.rows[k]
		rs, s := ratio(r, lwStore, k8sStore)
		rc, c := ratio(r, lwCache, k8sCache)
		if tabled[r.metric] {
			gs.add(rs)
			gc.add(rc)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.bench, r.metric,
			cell(r, lwStore), cell(r, k8sStore), s, cell(r, lwCache), cell(r, k8sCache), c)
	}
	fmt.Fprintf(w, "\ngeometric mean of listwatch/Kubernetes over the rates (/s): etcd3 store %s, cacher %s (above 1: listwatch faster);"+
		" for ms, cpu-ns/event, cpu-ms/list, B/obj, x-encoded and terminated a ratio below 1 favours listwatch\n", gs, gc)
	if t.runs() > 1 {
		fmt.Fprintf(w, "each value is the mean over %d runs, each ratio the ratio of the means; each run's values are in the"+
			" benchmark lines above, and the goals table gives each run's ratio\n", t.runs())
	}
	return gs, gc
}

func main() {
	t := newTable()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Println(line)
		t.parseLine(line)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	if len(t.order) == 0 && !t.hasCapacity() {
		fmt.Fprintln(os.Stderr, "benchtable: no benchmark results with a Backend= name on stdin")
		os.Exit(1)
	}
	fmt.Println()
	_, cacheMean := t.print(os.Stdout)
	if t.hasCapacity() {
		fmt.Println()
		t.printCapacity(os.Stdout)
	}
	if t.hasPeer() {
		fmt.Println()
		t.printGoals(os.Stdout)
	}
	if t.hasStoreList() {
		fmt.Println()
		t.printStoreListGoal(os.Stdout, cacheMean)
	}
	if paths := t.config[profileKey]; len(paths) > 0 {
		fmt.Println()
		if err := printProfile(os.Stdout, paths); err != nil {
			fmt.Fprintln(os.Stderr, "benchtable: CPU profile summary:", err)
			os.Exit(1)
		}
	}
}
