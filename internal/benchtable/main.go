// Command benchtable turns `go test -bench` output into Markdown tables: one
// table per top-level benchmark, one row per sub-benchmark, one column per
// reported metric (ns/op, B/op, and every b.ReportMetric unit such as
// events/s or p99-ms). Lines that are not benchmark results pass through.
//
//	go test -run '^$' -bench . -benchtime 1x ./bench | go run ./internal/benchtable
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchtable: %v\n", err)
		os.Exit(1)
	}
}

// group is one top-level benchmark with its rows, in input order.
type group struct {
	name  string
	units []string
	rows  []row
}

type row struct {
	name    string
	metrics map[string]string
}

func run(in io.Reader, out io.Writer) error {
	var groups []*group
	byName := map[string]*group{}
	pkg := ""
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p
		}
		name, r, ok := parseResult(line)
		if !ok {
			fmt.Fprintln(out, line)
			continue
		}
		top, sub, _ := strings.Cut(name, "/")
		key := pkg + " " + top
		g := byName[key]
		if g == nil {
			g = &group{name: strings.TrimPrefix(pkg+" "+top, " ")}
			byName[key] = g
			groups = append(groups, g)
		}
		if sub == "" {
			sub = top
		}
		r.name = sub
		for _, u := range r.order() {
			if !contains(g.units, u) {
				g.units = append(g.units, u)
			}
		}
		g.rows = append(g.rows, r)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for _, g := range groups {
		writeTable(out, g)
	}
	return nil
}

// parseResult parses "BenchmarkX/sub-2  N  v1 unit1  v2 unit2 ...".
func parseResult(line string) (string, row, bool) {
	f := strings.Fields(line)
	if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") || len(f)%2 != 0 {
		return "", row{}, false
	}
	name := f[0]
	if i := strings.LastIndex(name, "-"); i > 0 && isDigits(name[i+1:]) {
		name = name[:i]
	}
	r := row{metrics: map[string]string{}}
	var order []string
	for i := 2; i+1 < len(f); i += 2 {
		r.metrics[f[i+1]] = f[i]
		order = append(order, f[i+1])
	}
	r.metrics["\x00order"] = strings.Join(order, "\x00")
	return name, r, true
}

func (r row) order() []string { return strings.Split(r.metrics["\x00order"], "\x00") }

func writeTable(out io.Writer, g *group) {
	fmt.Fprintf(out, "\n### %s\n\n| case | %s |\n|---|%s\n", g.name, strings.Join(g.units, " | "), strings.Repeat("---|", len(g.units)))
	for _, r := range g.rows {
		cells := make([]string, len(g.units))
		for i, u := range g.units {
			if v, ok := r.metrics[u]; ok {
				cells[i] = v
			} else {
				cells[i] = "–"
			}
		}
		fmt.Fprintf(out, "| %s | %s |\n", r.name, strings.Join(cells, " | "))
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
