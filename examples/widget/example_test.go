package widget_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

// A Widget, its storage key and its JSON.
func Example() {
	w := widget.NewWidget("default", "w1")
	w.Labels = map[string]string{"app": "web"}
	w.Spec.Replicas = 2
	key, _ := widget.KeyOf(w)
	data, _ := runtime.Encode(widget.Codec, w)
	fmt.Println(key)
	fmt.Println(string(data))
	// Output:
	// /widgets/default/w1
	// {"kind":"Widget","apiVersion":"demo.listwatch.dev/v1","metadata":{"name":"w1","namespace":"default","labels":{"app":"web"}},"spec":{"replicas":2},"status":{}}
}
