// Package demorun is what the examples' narrated demos (make demo-nodes,
// make demo-cluster) share: the etcd they store in, the goroutines of
// their parts, their narration, their steps' waits and their commands'
// main.
package demorun
