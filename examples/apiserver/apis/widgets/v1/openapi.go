package v1

import (
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

const (
	pkg      = modelPrefix
	metaPkg  = "io.k8s.apimachinery.pkg.apis.meta.v1."
	objMeta  = metaPkg + "ObjectMeta"
	listMeta = metaPkg + "ListMeta"
)

// GetOpenAPIDefinitions returns the OpenAPI schemas of the v1 types and of
// the parts of ObjectMeta and ListMeta they use, written by hand. The
// server needs them for server-side apply (field ownership is computed
// from the schema); fields of metadata the schema leaves out are kept.
func GetOpenAPIDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := map[string]common.OpenAPIDefinition{
		pkg + "Widget": {
			Schema: object("A widget: something of a size and a colour.", map[string]spec.Schema{
				"apiVersion": str("APIVersion of the object."),
				"kind":       str("Kind of the object."),
				"metadata":   refTo(ref, objMeta),
				"spec":       refTo(ref, pkg+"WidgetSpec"),
				"status":     refTo(ref, pkg+"WidgetStatus"),
			}),
			Dependencies: []string{objMeta, pkg + "WidgetSpec", pkg + "WidgetStatus"},
		},
		pkg + "WidgetList": {
			Schema: object("A list of widgets.", map[string]spec.Schema{
				"apiVersion": str("APIVersion of the object."),
				"kind":       str("Kind of the object."),
				"metadata":   refTo(ref, listMeta),
				"items":      *spec.ArrayProperty(ptr(refTo(ref, pkg+"Widget"))),
			}),
			Dependencies: []string{listMeta, pkg + "Widget"},
		},
		pkg + "WidgetSpec": {Schema: object("What the user asks of a widget.", map[string]spec.Schema{
			"size":  *spec.Int32Property().WithDescription("The widget's size, at least 0."),
			"color": str("The widget's colour; defaulted to blue."),
		})},
		pkg + "WidgetStatus": {Schema: object("What the server reports of a widget.", map[string]spec.Schema{
			"phase": str("Ready once the widget was stored."),
		})},
		objMeta: {Schema: preserveUnknown(object("Standard object metadata (the fields server-side apply tracks).", map[string]spec.Schema{
			"name":            str("Name of the object."),
			"generateName":    str("Prefix of a generated name."),
			"namespace":       str("Namespace of the object."),
			"uid":             str("UID of the object."),
			"resourceVersion": str("Version of the object."),
			"generation":      *spec.Int64Property(),
			"labels":          *spec.MapProperty(spec.StringProperty()),
			"annotations":     *spec.MapProperty(spec.StringProperty()),
			"finalizers":      *spec.ArrayProperty(spec.StringProperty()),
		}))},
		listMeta: {Schema: object("Standard list metadata.", map[string]spec.Schema{
			"resourceVersion":    str("Version of the list."),
			"continue":           str("Token for the next page."),
			"remainingItemCount": *spec.Int64Property(),
		})},
	}
	for _, name := range looseTypes {
		defs[name] = common.OpenAPIDefinition{Schema: preserveUnknown(object(name+" (fields not listed).", nil))}
	}
	return defs
}

// looseTypes are the types of the API machinery the server's routes
// (discovery, version, options, status, watch events) refer to: described
// as objects whose fields are not listed.
var looseTypes = []string{
	"io.k8s.apimachinery.pkg.version.Info",
	metaPkg + "APIGroupList", metaPkg + "APIGroup", metaPkg + "APIResourceList", metaPkg + "APIResource",
	metaPkg + "APIVersions", metaPkg + "GroupVersionForDiscovery", metaPkg + "ServerAddressByClientCIDR",
	metaPkg + "Status", metaPkg + "StatusDetails", metaPkg + "StatusCause", metaPkg + "DeleteOptions",
	metaPkg + "Preconditions", metaPkg + "WatchEvent", metaPkg + "Patch", metaPkg + "Time",
	metaPkg + "ManagedFieldsEntry", metaPkg + "OwnerReference", metaPkg + "FieldsV1",
	"io.k8s.apimachinery.pkg.runtime.RawExtension",
}

func object(desc string, props map[string]spec.Schema) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Description: desc, Type: []string{"object"}, Properties: props}}
}

func preserveUnknown(s spec.Schema) spec.Schema {
	s.VendorExtensible.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	return s
}

func str(desc string) spec.Schema { return *spec.StringProperty().WithDescription(desc) }

func refTo(ref common.ReferenceCallback, name string) spec.Schema {
	return spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(name)}}
}

func ptr[T any](v T) *T { return &v }
