// Package taint is the taint manager of the node lifecycle example (what
// Kubernetes calls the NoExecute taint eviction controller): it evicts the
// pods of nodes with NoExecute taints they do not tolerate.
//
//   - A pod that does not tolerate every NoExecute taint of its node is
//     evicted at once; one that tolerates them all for at most
//     tolerationSeconds is evicted when the shortest of those has elapsed
//     (delayed work on a workqueue.DelayingQueue); one that tolerates them
//     forever stays.
//   - When the taints go (or the pod comes to tolerate them), pending
//     evictions are cancelled.
//   - Node and pod events are handled by workers sharded by node name, so
//     that the events of one node are handled in order by one worker while
//     different nodes proceed in parallel.
//   - Evictions are deletes through the API. Pods owned by a DaemonSet are
//     never evicted.
package taint
