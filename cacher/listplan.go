package cacher

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// listPlan is what a GetList resolves to, with the etcd3 store's rules.
type listPlan struct {
	consistent bool   // RV "": consistent read
	minRV      uint64 // not older than
	exact      uint64 // exactly this RV (0: not exact)
	startKey   string // from a continue token
}

func (c *Cacher) planList(prefix string, opts storage.ListOptions) (listPlan, error) {
	r, err := storage.ParseListRequest(opts, prefix, c.cfg.Versioner)
	if err != nil {
		return listPlan{}, err
	}
	return listPlan{consistent: r.Consistent, minRV: r.MinRV, exact: r.Exact, startKey: r.StartKey}, nil
}

// setItems stores the elements' objects as the items of listObj.
func setItems(listObj runtime.Object, items []*watchcache.Element) error {
	objs := make([]runtime.Object, len(items))
	for i, el := range items {
		obj, err := el.Object()
		if err != nil {
			return err
		}
		objs[i] = obj
	}
	return meta.SetList(listObj, objs)
}
