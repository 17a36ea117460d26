package cacher

import "github.com/listwatch/listwatch/storage"

// listPlan is what a GetList resolves to, with the etcd3 store's rules.
type listPlan struct {
	consistent bool   // RV "": consistent read
	minRV      uint64 // not older than
	exact      uint64 // exactly this RV (0: not exact)
	startKey   string // from a continue token
}

// planList resolves a list of prefix with opts (storage.ParseListRequest).
func planList(prefix string, opts storage.ListOptions) (listPlan, error) {
	r, err := storage.ParseListRequest(opts, prefix)
	if err != nil {
		return listPlan{}, err
	}
	return listPlan{consistent: r.Consistent, minRV: r.MinRV, exact: r.Exact, startKey: r.StartKey}, nil
}
