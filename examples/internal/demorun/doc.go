// Package demorun is what the examples' narrated demos (make demo-nodes,
// make demo-cluster) share: the stack they run on (etcd, the API server,
// a client, the goroutines of their parts and their informers), their
// scenario's narrated, checked steps, their waits, their options'
// defaults and their commands' main.
package demorun
