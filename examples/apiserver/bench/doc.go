// Package bench measures the example widget apiserver on Kubernetes' own
// storage and on listwatch's, back to back in one run: watch fan-out over
// HTTPS, list latency, heap per cached object and how many watchers must
// relist after a restart. Run it with make bench-apiserver.
package bench
