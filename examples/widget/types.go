package widget

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Widget is a namespaced example object.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired state.
	Spec WidgetSpec `json:"spec,omitempty"`
	// Status is the observed state, written by a controller.
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Replicas is how many copies of the widget are wanted.
	Replicas int64 `json:"replicas,omitempty"`
	// Color is a free-form attribute.
	Color string `json:"color,omitempty"`
	// NodeName is the node the widget runs on; selectable as the field
	// spec.nodeName (see GetAttrs).
	NodeName string `json:"nodeName,omitempty"`
	// Tags are free-form; a slice, so DeepCopy has something to copy.
	Tags []string `json:"tags,omitempty"`
	// Data is a free-form payload (benchmarks pad objects with it).
	Data string `json:"data,omitempty"`
}

// WidgetStatus is the observed state of a Widget.
type WidgetStatus struct {
	// ObservedGeneration is the metadata.generation a controller last
	// acted on.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// ReadyReplicas is how many copies are ready.
	ReadyReplicas int64 `json:"readyReplicas,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the Widgets.
	Items []Widget `json:"items"`
}
