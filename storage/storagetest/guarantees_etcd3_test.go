package storagetest_test

import (
	"testing"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/storage/storagetest"
)

// TestWatchGuaranteesEtcd3 runs the randomized guarantee checker against the
// etcd3 store on the shared embedded etcd. It compacts etcd, so it must not
// run in parallel with other tests.
func TestWatchGuaranteesEtcd3(t *testing.T) {
	prefix := embedtest.Prefix(t)
	store, err := etcd3.New(etcd3.Config{
		Client:         etcd.Client,
		Codec:          testapi.Codec,
		NewFunc:        testapi.NewWidget,
		NewListFunc:    testapi.NewWidgetList,
		Prefix:         prefix,
		ResourcePrefix: "/widgets",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	storagetest.RunWatchGuarantees(t, storagetest.GuaranteeEnv{
		Store:          store,
		Client:         etcd.Client,
		EtcdPrefix:     prefix,
		ResourcePrefix: "/widgets",
		Codec:          testapi.Codec,
		NewFunc:        testapi.NewWidget,
		GetAttrs:       testapi.GetAttrs,
	}, storagetest.GuaranteeOptions{
		// The etcd3 store may deliver part of the compaction revision's
		// transaction (the events that need no previous value) before the
		// 410 it sends for the first event that lost its previous value, so
		// the last revision before the error may be cut.
		// TODO: drop this once the store checks a whole revision first.
		LenientCompactionErrors: true,
	})
}
