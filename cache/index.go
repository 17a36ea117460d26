package cache

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
)

// fieldIndexPrefix names the informer index of a field.
const fieldIndexPrefix = "field:"

// IndexField indexes the objects of obj's kind by the values extract
// returns for field (such as the node of a pod), so that a List selecting
// field=value (client.MatchingFields) reads the index instead of every
// object, and so that fields the kind's GetAttrs does not return can be
// selected from the cache at all. It may be called before or after Start.
func (c *Cache) IndexField(obj client.Object, field string, extract func(client.Object) []string) error {
	inf, err := c.InformerFor(obj)
	if err != nil {
		return err
	}
	return inf.AddIndexers(reflector.Indexers[client.Object]{
		fieldIndexPrefix + field: func(o client.Object) ([]string, error) {
			var out []string
			for _, v := range extract(o) {
				// One value per namespace, one for all namespaces (the
				// same for a cluster-scoped object).
				out = append(out, fieldIndexKey(o.GetNamespace(), v))
				if o.GetNamespace() != "" {
					out = append(out, fieldIndexKey("", v))
				}
			}
			slices.Sort(out)
			return slices.Compact(out), nil
		},
	})
}

// fieldIndexKey is an index value of a field value in namespace ("": all).
func fieldIndexKey(namespace, value string) string { return namespace + "/" + value }

// fromFieldIndex returns the objects of inf whose indexed field has the
// value an exact requirement of sel asks for, and sel without that
// requirement; ok is false when no requirement of sel is indexed.
func fromFieldIndex(inf *Informer, namespace string, sel fields.Selector) (objs []client.Object, rest fields.Selector, ok bool, err error) {
	if sel == nil || sel.Empty() {
		return nil, sel, false, nil
	}
	indexers := inf.GetIndexer().GetIndexers()
	reqs := sel.Requirements()
	for i, r := range reqs {
		if r.Operator != selection.Equals && r.Operator != selection.DoubleEquals {
			continue
		}
		name := fieldIndexPrefix + r.Field
		if _, indexed := indexers[name]; !indexed {
			continue
		}
		objs, err := inf.GetIndexer().ByIndex(name, fieldIndexKey(namespace, r.Value))
		if err != nil {
			return nil, nil, false, fmt.Errorf("cache: index of %s: %w", r.Field, err)
		}
		var others []fields.Selector
		for j, o := range reqs {
			if j == i {
				continue
			}
			if o.Operator == selection.NotEquals {
				others = append(others, fields.OneTermNotEqualSelector(o.Field, o.Value))
			} else {
				others = append(others, fields.OneTermEqualSelector(o.Field, o.Value))
			}
		}
		return objs, fields.AndSelectors(others...), true, nil
	}
	return nil, sel, false, nil
}
