package cacher

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	var p listPlan
	if opts.Recursive && opts.Predicate.Continue != "" {
		if opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
			return p, storage.NewInvalidArgumentError("specifying resource version is not allowed when using continue", nil)
		}
		start, rv, err := storage.DecodeContinue(opts.Predicate.Continue, prefix)
		if err != nil {
			return p, storage.NewInvalidArgumentError("invalid continue token", err)
		}
		p.startKey = start
		if rv > 0 {
			p.exact = uint64(rv)
		} else {
			p.consistent = true
		}
		return p, nil
	}
	if opts.ResourceVersion == "" {
		switch opts.ResourceVersionMatch {
		case "", metav1.ResourceVersionMatchNotOlderThan:
			p.consistent = true
			return p, nil
		case metav1.ResourceVersionMatchExact:
			return p, storage.NewInvalidArgumentError("resourceVersionMatch=Exact needs a resourceVersion", nil)
		}
		return p, storage.NewInvalidArgumentError(fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch), nil)
	}
	rv, err := c.cfg.Versioner.ParseResourceVersion(opts.ResourceVersion)
	if err != nil {
		return p, err
	}
	switch opts.ResourceVersionMatch {
	case metav1.ResourceVersionMatchNotOlderThan:
		p.minRV = rv
	case metav1.ResourceVersionMatchExact:
		if rv == 0 {
			return p, storage.NewInvalidArgumentError("resourceVersionMatch=Exact needs a resourceVersion other than 0", nil)
		}
		p.exact = rv
	case "":
		if opts.Recursive && opts.Predicate.Limit > 0 && rv > 0 {
			p.exact = rv
		} else {
			p.minRV = rv
		}
	default:
		return p, storage.NewInvalidArgumentError(fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch), nil)
	}
	return p, nil
}

// setItems stores the elements' objects as the items of listObj.
func setItems(listObj runtime.Object, items []*watchcache.Element) error {
	objs := make([]runtime.Object, len(items))
	for i, el := range items {
		objs[i] = el.Object
	}
	return meta.SetList(listObj, objs)
}
