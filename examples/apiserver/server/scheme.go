package server

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"

	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
	widgetsv1 "github.com/listwatch/listwatch/examples/apiserver/apis/widgets/v1"
)

// Scheme holds the widget types of every version, and Codecs their
// serializers.
var (
	Scheme = runtime.NewScheme()
	Codecs = serializer.NewCodecFactory(Scheme)
)

func init() {
	utilruntime.Must(widgets.AddToScheme(Scheme))
	utilruntime.Must(widgetsv1.AddToScheme(Scheme))
	utilruntime.Must(Scheme.SetVersionPriority(widgetsv1.SchemeGroupVersion))
	// The options and status types every API server serves.
	metav1.AddToGroupVersion(Scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	Scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{},
		&metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
}
