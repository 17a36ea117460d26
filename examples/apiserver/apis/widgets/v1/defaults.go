package v1

import "k8s.io/apimachinery/pkg/runtime"

// DefaultColor is the colour of a widget created without one.
const DefaultColor = "blue"

// SetDefaultsWidget fills the defaults of w.
func SetDefaultsWidget(w *Widget) {
	if w.Spec.Color == "" {
		w.Spec.Color = DefaultColor
	}
}

func addDefaultingFuncs(s *runtime.Scheme) {
	s.AddTypeDefaultingFunc(&Widget{}, func(obj any) { SetDefaultsWidget(obj.(*Widget)) })
	s.AddTypeDefaultingFunc(&WidgetList{}, func(obj any) {
		l := obj.(*WidgetList)
		for i := range l.Items {
			SetDefaultsWidget(&l.Items[i])
		}
	})
}
