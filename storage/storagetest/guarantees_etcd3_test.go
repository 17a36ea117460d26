package storagetest_test

import (
	"testing"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
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
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		NewListFunc:    widget.NewList,
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
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		GetAttrs:       widget.GetAttrs,
	}, storagetest.GuaranteeOptions{})
}
