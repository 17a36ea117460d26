// Package controller is the node lifecycle controller of the example, after
// Kubernetes' NodeLifecycleController as seed 002 describes it, written on
// the library's informers, workqueue and controller packages:
//
//   - every MonitorPeriod it checks each node's health: a renewal of the
//     node's Lease in kube-node-lease, or a new heartbeat in its NodeReady
//     condition, counts as a heartbeat (timed by the controller's own clock
//     when it observes it, so the kubelets' clocks do not matter); after
//     GracePeriod without one it sets NodeReady to Unknown;
//   - nodes whose NodeReady is not True get the NoSchedule taint at once
//     (node.kubernetes.io/unreachable for Unknown, not-ready for False, by a
//     reconciler of the controller package) and the NoExecute taint through
//     a rate-limited queue per zone; both go when NodeReady is True again;
//   - each zone is Normal, PartialDisruption (at least UnhealthyZoneThreshold
//     of its nodes, and more than two, not Ready) or FullDisruption (none
//     Ready), and its queue's rate follows: EvictionRate when Normal or
//     fully disrupted, SecondaryEvictionRate when partially disrupted in a
//     zone larger than LargeClusterThreshold, 0 in a smaller one;
//   - when every zone is fully disrupted the problem is most likely the
//     control plane's own network: all NoExecute taints are removed and no
//     new ones are added until some node is Ready again.
//
// Pods are evicted from NoExecute-tainted nodes by the taint manager
// (package taint), not here.
package controller
