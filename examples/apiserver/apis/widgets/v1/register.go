package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of widgets.
const GroupName = "widgets.listwatch.dev"

// SchemeGroupVersion is widgets.listwatch.dev/v1.
var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}

// AddToScheme registers the v1 types, their conversions and their defaults.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	if err := addConversionFuncs(s); err != nil {
		return err
	}
	addDefaultingFuncs(s)
	return nil
}
