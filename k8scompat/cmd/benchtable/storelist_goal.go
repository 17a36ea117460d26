package main

import (
	"fmt"
	"io"
	"strings"
)

// storeListPrefix names the rows of Kubernetes' RunBenchmarkStoreList.
const storeListPrefix = "StoreList/"

// hasStoreList reports whether any RunBenchmarkStoreList result was read.
func (t *table) hasStoreList() bool {
	for _, k := range t.order {
		if strings.HasPrefix(t.rows[k].bench, storeListPrefix) {
			return true
		}
	}
	return false
}

// printStoreListGoal writes the verdict of issue 25's goal 5: every
// RunBenchmarkStoreList row of the cacher at least 1.0 (listwatch lists at
// least as many objects per second as Kubernetes) and the cacher's
// geometric mean over all its rate rows (the one print reports) at least
// 1.5.
func (t *table) printStoreListGoal(w io.Writer, cacheMean geomean) {
	rows, atLeast := 0, 0
	var below []string
	for _, k := range t.order {
		r := t.rows[k]
		if !strings.HasPrefix(r.bench, storeListPrefix) || r.metric != "list-objs/s" {
			continue
		}
		v, s := ratio(r, lwCache, k8sCache)
		if s == "-" {
			continue
		}
		rows++
		if v >= 1 {
			atLeast++
		} else {
			below = append(below, fmt.Sprintf("%s %s", strings.TrimPrefix(r.bench, storeListPrefix), s))
		}
	}
	mean, okMean := cacheMean.value()
	met := rows > 0 && atLeast == rows && okMean && mean >= 1.5
	verdict := "**MISSED**"
	if met {
		verdict = "**MET**"
	}
	fmt.Fprintf(w, "G5 (issue 25: every RunBenchmarkStoreList row ≥ 1.0 and the geometric mean ≥ 1.5, for the cacher): %s\n", verdict)
	fmt.Fprintf(w, "- StoreList rows of the cacher at or above 1.0: %d of %d\n", atLeast, rows)
	if len(below) > 0 {
		fmt.Fprintf(w, "- below 1.0: %s\n", strings.Join(below, "; "))
	}
	fmt.Fprintf(w, "- cacher geometric mean over its rate rows: %s (goal ≥ 1.5)\n", cacheMean)
}
