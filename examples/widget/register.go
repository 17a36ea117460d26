package widget

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// GroupVersion is the API group and version of Widget.
var GroupVersion = schema.GroupVersion{Group: "demo.listwatch.dev", Version: "v1"}

// Resource is the Widget resource (as in /apis/demo.listwatch.dev/v1/widgets);
// informer factories key informers by it.
var Resource = GroupVersion.WithResource("widgets")

// Kind is Widget's kind.
const Kind = "Widget"

var (
	// SchemeBuilder registers Widget, WidgetList, Part and PartList.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
	// AddToScheme adds Widget and WidgetList to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{}, &Part{}, &PartList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Scheme has Widget and WidgetList registered.
var Scheme = newScheme()

// Codecs is the codec factory of Scheme.
var Codecs = serializer.NewCodecFactory(Scheme)

// Codec encodes Widgets and WidgetLists as JSON with apiVersion and kind,
// and decodes them (into a given object, or as demo.listwatch.dev/v1
// without one); it is what a store's Config.Codec takes.
var Codec = newCodec()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err) // registering two fixed types cannot fail
	}
	return s
}

func newCodec() runtime.Codec {
	info, ok := runtime.SerializerInfoForMediaType(Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		panic("widget: no JSON serializer") // apimachinery always has one
	}
	return Codecs.CodecForVersions(info.Serializer, Codecs.UniversalDeserializer(), GroupVersion, GroupVersion)
}

// New returns an empty *Widget: a storage NewFunc.
func New() runtime.Object { return &Widget{} }

// NewList returns an empty *WidgetList: a storage NewListFunc.
func NewList() runtime.Object { return &WidgetList{} }

// NewWidget returns a Widget named name in namespace with apiVersion and
// kind set.
func NewWidget(namespace, name string) *Widget {
	return &Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
	}
}

// WithLabels sets w's labels to labels and returns w.
func (w *Widget) WithLabels(labels map[string]string) *Widget {
	w.Labels = labels
	return w
}
