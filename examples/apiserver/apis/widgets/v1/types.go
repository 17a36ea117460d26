// Package v1 is version v1 of the widgets.listwatch.dev API group: its
// wire types, their conversion to and from the internal types, their
// defaults and their OpenAPI schema.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is something of a size and a colour.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is what the user asks of a widget.
type WidgetSpec struct {
	// Size is the widget's size, at least 0.
	Size int32 `json:"size,omitempty"`
	// Color is the widget's colour; "" is defaulted to "blue".
	Color string `json:"color,omitempty"`
}

// WidgetStatus is what the server reports of a widget.
type WidgetStatus struct {
	// Phase is "Ready" once the widget was stored.
	Phase string `json:"phase,omitempty"`
}

// WidgetList is a list of widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Widget `json:"items"`
}

// modelPrefix prefixes the OpenAPI model names of the v1 types.
const modelPrefix = "dev.listwatch.widgets.v1."

// OpenAPIModelName is the name of Widget's OpenAPI schema.
func (Widget) OpenAPIModelName() string { return modelPrefix + "Widget" }

// OpenAPIModelName is the name of WidgetList's OpenAPI schema.
func (WidgetList) OpenAPIModelName() string { return modelPrefix + "WidgetList" }

// OpenAPIModelName is the name of WidgetSpec's OpenAPI schema.
func (WidgetSpec) OpenAPIModelName() string { return modelPrefix + "WidgetSpec" }

// OpenAPIModelName is the name of WidgetStatus's OpenAPI schema.
func (WidgetStatus) OpenAPIModelName() string { return modelPrefix + "WidgetStatus" }
