package main

import "fmt"

// maxMemoryRatio is goal 1's bound on listwatch's heap per object as a
// multiple of the encoded size.
const maxMemoryRatio = 1.3

// memoryGoal is goal 1's memory row for n pods. It is judged on the pods
// that each carry a padding of their own (PeerMemory/.../Padding=distinct),
// which a cache sharing equal strings between objects cannot share, and
// shows beside each run the figure for the workload's padding, equal in
// every pod (Padding=shared), which it can.
func (t *table) memoryGoal(n int, unjudged string) goalRow {
	distinct := fmt.Sprintf("PeerMemory/Objects=%d/Padding=distinct", n)
	shared := fmt.Sprintf("PeerMemory/Objects=%d/Padding=shared", n)
	g := goalRow{goal: "G1", measure: fmt.Sprintf("memory, %s pods, each with a padding of its own: listwatch's heap per object / encoded size"+
		" (Kubernetes'; the same with the padding shared by all pods)", thousands(n)),
		target: fmt.Sprintf("≤ %.2f", maxMemoryRatio), unjudged: unjudged}
	measured := false
	for r := 1; r <= max(1, t.runs()); r++ {
		v, ok := t.sample(distinct, r, lwCache, "x-encoded")
		c := runCell{measured: ok, met: ok && v <= maxMemoryRatio, text: "-"}
		if ok {
			measured = true
			c.text = fmt.Sprintf("%.2f", v)
			if k, ok := t.sample(distinct, r, k8sCache, "x-encoded"); ok {
				c.text += fmt.Sprintf(" (k8s %.2f)", k)
			}
		}
		if s, ok := t.sample(shared, r, lwCache, "x-encoded"); ok {
			c.text += fmt.Sprintf("; shared padding %.2f", s)
			if k, ok := t.sample(shared, r, k8sCache, "x-encoded"); ok {
				c.text += fmt.Sprintf(" (k8s %.2f)", k)
			}
		}
		g.cells = append(g.cells, c)
	}
	if !measured {
		g.note = fmt.Sprintf("not measured: needs %s (BenchmarkPeerMemory measures both paddings)", distinct)
	}
	return g
}
