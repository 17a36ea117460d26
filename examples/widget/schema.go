package widget

import "k8s.io/kube-openapi/pkg/validation/spec"

// Schema returns Widget's OpenAPI v3 structural schema, as a CRD
// would carry it (without apiVersion, kind and metadata, which the server
// adds): spec.nodeName, spec.data, spec.color and spec.replicas (an integer >= 0), and
// a free-form status. Each call returns a new schema.
func Schema() *spec.Schema {
	replicas := spec.Int64Property().WithMinimum(0, false)
	replicas.Description = "Replicas is how many copies of the widget are wanted; the SIZE column shows it."
	nodeName := spec.StringProperty()
	nodeName.Description = "NodeName is the node the widget runs on; selectable as the field spec.nodeName."
	data := spec.StringProperty()
	data.Description = "Data is a free-form payload."
	color := spec.StringProperty()
	color.Description = "Color is a free-form attribute (the cacher-demo walkthrough sets it)."
	widgetSpec := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"object"},
		Description: "WidgetSpec is the desired state of a Widget.",
		Properties: map[string]spec.Schema{
			"nodeName": *nodeName,
			"data":     *data,
			"color":    *color,
			"replicas": *replicas,
		},
	}}
	status := &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"object"},
		Description: "Status is free-form observed state.",
	}}
	status.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	return &spec.Schema{SchemaProps: spec.SchemaProps{
		Type:        spec.StringOrArray{"object"},
		Description: "Widget is a namespaced demo object.",
		Properties:  map[string]spec.Schema{"spec": *widgetSpec, "status": *status},
	}}
}
