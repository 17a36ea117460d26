// Package bench holds the project's benchmarks of the workload in
// ../shared/bench/WORKLOAD.md, run side by side against the etcd3 store
// directly (source=etcd) and against the cacher over it (source=cache-...),
// on one embedded etcd per benchmark binary (fsync off, 8 GiB quota).
//
// Run them with
//
//	make bench PKGS=./bench                          # N = 10,000, about 2-3 minutes
//	LISTWATCH_BENCH_N=50000 make bench PKGS=./bench  # N = 50,000
//	LISTWATCH_BENCH_FULL=1 make bench PKGS=./bench   # no trimmed scenario
//
// `go test ./bench` runs only the unit tests of the helpers and starts no
// etcd. The embedded etcd runs in the benchmark's process, so its CPU and
// heap show up in every number; the writer of the watch scenarios uses the
// raw etcd client, the same for every source.
//
// Each benchmark runs its scenario a fixed number of times inside one
// iteration (use -benchtime 1x) and reports what the workload asks for as
// metrics, so the output reads as a table:
//
//   - BenchmarkList/N=…/source=S (LIST): list all N objects, 20 runs;
//     p50-ms and p90-ms, objects returned. Sources: etcd (a linearizable
//     range), cache-rv0 (RV "0", any cached state), cache-consistent (RV "",
//     the cache after it has caught up with etcd's current revision).
//   - BenchmarkListSelector (LIST-SEL): labelSelector app=app-3 (N/10
//     objects), 20 runs, p50-ms.
//   - BenchmarkPage (PAGE): limit 500 pages until done, 10 runs, p50-ms of
//     the whole walk; storage-calls counts requests that reached the etcd3
//     store.
//   - BenchmarkFanout/W=…/source=S (FANOUT): W watchers start at the current
//     RV; one writer makes E=2,000 updates round-robin over the objects on the
//     raw etcd client; events/s = W·E / time until every watcher has every
//     event; write→delivery latency p50-ms/p99-ms from a timestamp
//     annotation written in each update; etcd-watches = storage Watch calls
//     that reached the etcd3 store (the cacher's own stream included). On the
//     etcd source W=1000 runs E=200 (every etcd watch decodes every event:
//     E=2,000 takes minutes on 2 cores) unless LISTWATCH_BENCH_FULL=1; the
//     name says which E ran.
//   - BenchmarkFanoutSelector (FANOUT-SEL): 1,000 watchers each with the
//     field selector metadata.name=<its object>; E=2,000 updates spread over
//     those objects; same metrics, events counted once per delivery. On the
//     etcd source each watcher watches its object's key (etcd filters), on
//     the cache the resource with the selector (the cacher's dispatch index
//     must do the filtering). Both are bound by the single writer's speed,
//     so compare latency rather than events/s.
//   - BenchmarkSlow (SLOW): 100 watchers, 10 of which sleep 5 ms per event;
//     E=2,000 updates; fast-ended and slow-ended (watchers whose stream ended
//     before they had every event), fast-p99-ms, fast-s (time until every fast
//     watcher has everything) and slow-s (time until every slow one has).
//   - BenchmarkResume (RESUME): a watcher stops, 1,000 updates happen, it
//     resumes from its last RV; catchup-ms until it has them all and
//     storage-calls that reached the etcd3 store meanwhile (for the cacher,
//     ideally zero: it serves the resume from its history).
//   - BenchmarkIdleBookmarks: 10,000 idle watchers that allow bookmarks
//     over one simulated minute of the cacher's (fake) clock; bookmarks/s
//     delivered and the busiest second (peak-bookmarks/s).
//   - BenchmarkMemory (MEMORY): a new cacher loads the N objects; heap in use
//     after GC per object (bytes/obj) and its ratio to the encoded size.
//
// Objects follow the workload: namespace bench, names obj-00000…, labels
// app=app-<i%10> and tier=tier-<(i/10)%10>, spec.nodeName=node-<i%100>,
// padded with an annotation to about 1 KiB of JSON (widget.Codec); JSON is
// the only encoding measured (Widget has no protobuf form).
package bench
