package registry

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
)

// NewREST returns the REST storage of widgets, its storage built by
// optsGetter's decorator.
func NewREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, error) {
	s := newStrategy(scheme)
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &widgets.Widget{} },
		NewListFunc:               func() runtime.Object { return &widgets.WidgetList{} },
		PredicateFunc:             matcher,
		DefaultQualifiedResource:  widgets.Resource("widgets"),
		SingularQualifiedResource: widgets.Resource("widget"),
		CreateStrategy:            s,
		UpdateStrategy:            s,
		DeleteStrategy:            s,
		TableConvertor:            rest.NewDefaultTableConvertor(widgets.Resource("widgets")),
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: GetAttrs}); err != nil {
		return nil, err
	}
	return store, nil
}
