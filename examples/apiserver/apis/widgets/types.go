// Package widgets is the widgets.listwatch.dev API group: its internal
// (hub) types, which the server stores and works with, and the scheme
// registration of every version (Install).
package widgets

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GroupName is the API group of widgets.
const GroupName = "widgets.listwatch.dev"

// Widget is the internal form of a widget: something of a size and a colour.
type Widget struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	Spec   WidgetSpec
	Status WidgetStatus
}

// WidgetSpec is what the user asks of a widget.
type WidgetSpec struct {
	// Size is the widget's size, at least 0.
	Size int32
	// Color is the widget's colour (defaulted to "blue" by v1).
	Color string
}

// WidgetStatus is what the server reports of a widget.
type WidgetStatus struct {
	// Phase is "Ready" once the widget was stored.
	Phase string
}

// WidgetList is a list of widgets.
type WidgetList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []Widget
}
