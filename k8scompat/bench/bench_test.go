package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/embedtest"
)

// dims is the dataset: Kubernetes' own benchmarks use 50 namespaces x 3000
// pods on 5000 nodes; the default here is 20 x 100 on 100 nodes.
func dims() (namespaces, podsPerNamespace, nodes int) {
	return envInt("K8SBENCH_NAMESPACES", 20), envInt("K8SBENCH_PODS_PER_NS", 100), envInt("K8SBENCH_NODES", 100)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func dataset() storagetesting.BenchmarkData {
	ns, pods, nodes := dims()
	return storagetesting.PrepareBenchmarkData(ns, pods, nodes)
}

// BenchmarkWriteThroughput is RunBenchmarkWriteThroughput on each backend.
func BenchmarkWriteThroughput(b *testing.B) {
	klog.SetLogger(logr.Discard())
	data := dataset()
	for _, be := range backends {
		b.Run("Backend="+be.name, func(b *testing.B) {
			srv := embedtest.Start(b)
			store := be.new(b, srv)
			storagetesting.RunBenchmarkWriteThroughput(context.Background(), b, store, data, be.cached, nil)
		})
	}
}

// BenchmarkStoreList is RunBenchmarkStoreList on each backend, with and
// without index use for the caches.
func BenchmarkStoreList(b *testing.B) {
	klog.SetLogger(logr.Discard())
	data := dataset()
	for _, be := range backends {
		b.Run("Backend="+be.name, func(b *testing.B) {
			srv := embedtest.Start(b)
			store := be.new(b, srv)
			require.NoError(b, storagetesting.PrecreateBenchmarkPods(context.Background(), store, data))
			indexed := []bool{false}
			if be.cached {
				indexed = append(indexed, true)
			}
			for _, useIndex := range indexed {
				b.Run(fmt.Sprintf("Indexed=%v", useIndex), func(b *testing.B) {
					storagetesting.RunBenchmarkStoreList(context.Background(), b, store, data, useIndex)
				})
			}
		})
	}
}
