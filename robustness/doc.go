// Package robustness tests listwatch the way etcd tests itself
// (etcd's tests/robustness): random control-plane traffic from several
// clients through one to three cacher replicas over a three-member
// embedded etcd, faults injected while it runs, and the recorded history
// checked afterwards against etcd's own:
//
//   - linearizability of writes and consistent reads, with porcupine over
//     a per-key model (errors count as "may have happened");
//   - every read at a resource version equal to etcd's state at it;
//   - the six watch guarantees on every watch and resume (storagetest's
//     checker);
//   - no acknowledged write lost;
//   - every error typed, and no request answered after its deadline.
//
// The suite is only tests (see robustness_test.go); this file holds its
// documentation. docs/robustness.md says how to run it and what a run found.
package robustness
