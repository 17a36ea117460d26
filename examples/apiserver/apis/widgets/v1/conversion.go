package v1

import (
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
)

// The conversions leave TypeMeta alone: the codec sets the kind of the
// object it encodes or decodes, and list items carry none.

// Convert_v1_Widget_To_widgets_Widget converts a v1 widget to the internal form.
func Convert_v1_Widget_To_widgets_Widget(in *Widget, out *widgets.Widget, _ conversion.Scope) error {
	out.ObjectMeta = in.ObjectMeta
	out.Spec = widgets.WidgetSpec{Size: in.Spec.Size, Color: in.Spec.Color}
	out.Status = widgets.WidgetStatus{Phase: in.Status.Phase}
	return nil
}

// Convert_widgets_Widget_To_v1_Widget converts an internal widget to v1.
func Convert_widgets_Widget_To_v1_Widget(in *widgets.Widget, out *Widget, _ conversion.Scope) error {
	out.ObjectMeta = in.ObjectMeta
	out.Spec = WidgetSpec{Size: in.Spec.Size, Color: in.Spec.Color}
	out.Status = WidgetStatus{Phase: in.Status.Phase}
	return nil
}

// Convert_v1_WidgetList_To_widgets_WidgetList converts a v1 list to the internal form.
func Convert_v1_WidgetList_To_widgets_WidgetList(in *WidgetList, out *widgets.WidgetList, s conversion.Scope) error {
	out.ListMeta = in.ListMeta
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]widgets.Widget, len(in.Items))
		for i := range in.Items {
			if err := Convert_v1_Widget_To_widgets_Widget(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// Convert_widgets_WidgetList_To_v1_WidgetList converts an internal list to v1.
func Convert_widgets_WidgetList_To_v1_WidgetList(in *widgets.WidgetList, out *WidgetList, s conversion.Scope) error {
	out.ListMeta = in.ListMeta
	out.Items = nil
	if in.Items != nil {
		out.Items = make([]Widget, len(in.Items))
		for i := range in.Items {
			if err := Convert_widgets_Widget_To_v1_Widget(&in.Items[i], &out.Items[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

func addConversionFuncs(s *runtime.Scheme) error {
	if err := s.AddConversionFunc((*Widget)(nil), (*widgets.Widget)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_v1_Widget_To_widgets_Widget(a.(*Widget), b.(*widgets.Widget), scope)
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*widgets.Widget)(nil), (*Widget)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_widgets_Widget_To_v1_Widget(a.(*widgets.Widget), b.(*Widget), scope)
	}); err != nil {
		return err
	}
	if err := s.AddConversionFunc((*WidgetList)(nil), (*widgets.WidgetList)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_v1_WidgetList_To_widgets_WidgetList(a.(*WidgetList), b.(*widgets.WidgetList), scope)
	}); err != nil {
		return err
	}
	return s.AddConversionFunc((*widgets.WidgetList)(nil), (*WidgetList)(nil), func(a, b any, scope conversion.Scope) error {
		return Convert_widgets_WidgetList_To_v1_WidgetList(a.(*widgets.WidgetList), b.(*WidgetList), scope)
	})
}
