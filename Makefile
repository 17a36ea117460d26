# listwatch: the etcd-facing half of Kubernetes' List-Watch.
SHELL   := /bin/bash
GO      ?= go
PKGS    ?= ./...
TIMEOUT ?= 30m
BENCH   ?= .
BENCHTIME ?= 1x

.PHONY: all test vet build bench cover fmt demo demo-nodes bench-nodes demo-cluster bench-cluster robustness

all: build test

## build: compile every package and command
build:
	$(GO) build $(PKGS)

## vet: static checks
vet:
	$(GO) vet $(PKGS)

## test: vet, then every test with the race detector (embedded etcd, nothing to install), then the k8scompat module's and the example apiserver's
test: vet
	$(GO) test -race -count=1 -timeout $(TIMEOUT) $(PKGS)
	$(MAKE) test-k8scompat
	$(MAKE) test-apiserver

.PHONY: test-k8scompat test-apiserver bench-apiserver bench-k8s bench-peer bench-scale bench-scale-http
SCALE_OBJECTS  ?= 1000000
SCALE_WATCHERS ?= 100000
SCALE_ENCODED  ?= false
SCALE_REJOIN   ?= 10000

## bench-scale: a cacher over SCALE_OBJECTS objects of ~1 KiB with SCALE_WATCHERS idle watchers (SCALE_ENCODED=true: objects kept encoded): priming and load time, heap per object and per watcher, one event's latency; then a relist with SCALE_REJOIN watchers of the whole resource: relist time, peak heap during it, rejoin time
bench-scale:
	$(GO) test -run '^$$' -bench 'Scale$$' -benchtime 1x -timeout 60m ./bench -args -scale.objects=$(SCALE_OBJECTS) -scale.watchers=$(SCALE_WATCHERS) -scale.encoded=$(SCALE_ENCODED) -scale.rejoin=$(SCALE_REJOIN)

SCALE_HTTP_OBJECTS  ?= 10000
SCALE_HTTP_WATCHERS ?= 100000
SCALE_HTTP_STREAMS  ?= 100
SCALE_HTTP_WRITES   ?= 10
SCALE_HTTP_PERKEY   ?= false
## bench-scale-http: the HTTP server over a cacher of SCALE_HTTP_OBJECTS objects with SCALE_HTTP_WATCHERS HTTP watches of one namespace over h2c, SCALE_HTTP_STREAMS per connection (clients in a child process): the server's memory (heap + stack), heap, stack and goroutines per watch, then p50/p99/max delivery of each of SCALE_HTTP_WRITES writes to all of them (SCALE_HTTP_PERKEY=true: each watch on one key)
bench-scale-http:
	$(GO) test -run '^$$' -bench ScaleHTTP -benchtime 1x -timeout 60m ./bench -args -scale.httpobjects=$(SCALE_HTTP_OBJECTS) -scale.httpwatchers=$(SCALE_HTTP_WATCHERS) -scale.httpstreams=$(SCALE_HTTP_STREAMS) -scale.httpwrites=$(SCALE_HTTP_WRITES) -scale.httpperkey=$(SCALE_HTTP_PERKEY)
K8SBENCHTIME ?= 500ms

## test-k8scompat: Kubernetes' own storage suite (k8s.io/apiserver v0.37.2) against listwatch, in the separate module k8scompat/
test-k8scompat:
	cd k8scompat && $(GO) vet ./... && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

## test-apiserver: the example generic apiserver (examples/apiserver, its own module) driven by client-go and kubectl on an embedded etcd
test-apiserver:
	cd examples/apiserver && $(GO) vet ./... && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

APISERVER_OBJECTS  ?= 10000
APISERVER_WATCHERS ?= 200,1000,5000
APISERVER_PROFILE  ?=
APISERVER_PROTOCOLS ?= h2
APISERVER_PACE     ?= 0
APISERVER_DURATION ?= 5s
APISERVER_WATCHPROC ?= false
## bench-apiserver: the example apiserver on Kubernetes' storage, then on listwatch's, back to back (fresh embedded etcd each): watch fan-out over HTTPS at APISERVER_WATCHERS watchers (200, 1,000 and 5,000 unless set) over APISERVER_PROTOCOLS (h2: HTTP/2, 100 watches per connection, the default; h1: HTTP/1.1, one connection per watch; e.g. h2,h1) with the writer at APISERVER_PACE (0: as fast as it can, the default; e.g. 200ms: one write per 200 ms, timed until every watcher got it; a list runs each) for APISERVER_DURATION (5s unless set), with the process's CPU and the server's (less the clients' profile share) per delivered event (APISERVER_WATCHPROC=true: the watchers in a process of their own, needed for 10,000 HTTP/1.1 watchers under a 20,000-descriptor limit), list latency at APISERVER_OBJECTS widgets, heap per cached object, watchers relisting after a restart; APISERVER_PROFILE=dir writes a CPU profile of each fan-out run there
bench-apiserver:
	cd examples/apiserver && $(GO) test -run '^$$' -bench Apiserver -benchtime 1x -timeout 60m ./bench -args -apiserver.objects=$(APISERVER_OBJECTS) -apiserver.watchers=$(APISERVER_WATCHERS) -apiserver.protocols=$(APISERVER_PROTOCOLS) -apiserver.pace=$(APISERVER_PACE) -apiserver.duration=$(APISERVER_DURATION) -apiserver.watchproc=$(APISERVER_WATCHPROC) -apiserver.cpuprofile=$(APISERVER_PROFILE)

## bench-k8s: Kubernetes' own storage benchmarks on listwatch and on Kubernetes' etcd3 store and cacher, side by side, ending with issue 25's goal 5 verdict
bench-k8s:
	set -o pipefail; cd k8scompat && $(GO) test -run '^$$' -bench 'WriteThroughput|StoreList' -benchtime $(K8SBENCHTIME) -timeout 60m ./bench | $(GO) run ./cmd/benchtable

K8SBENCH_PEER_RUNS ?= 3
## bench-peer: listwatch's cacher and Kubernetes' cacher on the same workload in one process (fan-out capacity at 1,000 and 10,000 watchers with the harness's own CPU, unpaced fan-out watchers lost, slow watchers, memory, lists, idle watchers), K8SBENCH_PEER_RUNS runs of each (3 unless set; the caches' order alternating), side by side; then issue 25's goals with each run's ratio and verdict, and the CPU profile summary of listwatch's 1,000-watcher fan-out (K8SBENCH_PEER_CPUPROFILE=dir keeps the profiles there); knobs in k8scompat/bench/doc.go
bench-peer:
	set -o pipefail; cd k8scompat && K8SBENCH_PEER_RUNS=$(K8SBENCH_PEER_RUNS) $(GO) test -run '^$$' -bench Peer -benchtime 1x -timeout 120m ./bench | $(GO) run ./cmd/benchtable

## bench: the benchmark tables (see README); one table per benchmark, one column per metric
bench:
	set -o pipefail; $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -timeout 60m $(PKGS) | $(GO) run ./internal/benchtable

DURATION ?= 5m
SEED     ?= 0
## robustness: the robustness suite as a soak (docs/robustness.md): DURATION of traffic (5m unless set) through three cacher replicas over a three-member embedded etcd, every fault kind cycling, then the checks; SEED replays a run (0: from the clock); prints the run's table, and on failure the seed and the directory holding the history and porcupine's visualisation
robustness:
	$(GO) test -race -count=1 -timeout 3h -run 'TestRobustness$$' -v ./robustness -args -robustness.duration=$(DURATION) -robustness.seed=$(SEED)

## cover: test coverage summary
cover:
	$(GO) test -count=1 -coverprofile=cover.out $(PKGS)
	$(GO) tool cover -func=cover.out | tail -1

## demo: the scripted revision/resume walkthrough on an embedded etcd
demo:
	$(GO) run ./cmd/cacher-demo

## demo-nodes: the node lifecycle example (controller + taint manager over informers, simulated kubelets), narrated and self-checking
demo-nodes:
	$(GO) run ./examples/nodelifecycle/cmd/demo-nodes

## bench-nodes: the node lifecycle example at scale (5,000 nodes, 50,000 pods): heartbeat-to-taint latency and the controller manager's heap
bench-nodes:
	$(GO) test -run '^$$' -bench NodeLifecycle -benchtime 1x -timeout 30m ./examples/nodelifecycle/bench

## demo-cluster: the Deployment → ReplicaSet → Pod → scheduler → kubelet walk over List-Watch with the real kubectl (create, rollout status, set image, undo, scale, a dead node's pods replaced, the leading controller manager killed mid-rollout, cascading deletes), narrated and self-checking
demo-cluster:
	$(GO) run ./examples/cluster/cmd/demo-cluster

CLUSTER_NODES    ?= 100
CLUSTER_REPLICAS ?= 3000
## bench-cluster: the cluster example at scale (CLUSTER_NODES simulated nodes, a Deployment of CLUSTER_REPLICAS): time to all available, pod startup p50/p99 as a watcher sees it, a rolling update of every pod, API requests and etcd reads per pod, the controller manager's CPU and heap (in a process of its own)
bench-cluster:
	$(GO) test -run '^$$' -bench Cluster -benchtime 1x -timeout 60m ./examples/cluster/bench -args -cluster.nodes=$(CLUSTER_NODES) -cluster.replicas=$(CLUSTER_REPLICAS)

## fmt: format the code
fmt:
	gofmt -w $$(git ls-files '*.go')
