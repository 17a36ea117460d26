package widget_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

func TestDeepCopyIsIndependent(t *testing.T) {
	w := widget.NewWidget("ns", "a")
	w.Labels = map[string]string{"app": "web"}
	w.Spec.Tags = []string{"x"}
	w.OwnerReferences = []metav1.OwnerReference{{Name: "o"}}
	c := w.DeepCopy()
	require.Equal(t, w, c)
	c.Labels["app"] = "db"
	c.Spec.Tags[0] = "y"
	c.OwnerReferences[0].Name = "p"
	require.Equal(t, "web", w.Labels["app"])
	require.Equal(t, "x", w.Spec.Tags[0])
	require.Equal(t, "o", w.OwnerReferences[0].Name)

	l := &widget.WidgetList{Items: []widget.Widget{*w}}
	lc := l.DeepCopyObject().(*widget.WidgetList)
	lc.Items[0].Spec.Tags[0] = "z"
	require.Equal(t, "x", l.Items[0].Spec.Tags[0])
	var nilWidget *widget.Widget
	require.Nil(t, nilWidget.DeepCopy())
}

func TestCodecRoundTrip(t *testing.T) {
	w := widget.NewWidget("ns", "a")
	w.Spec.Replicas = 3
	data, err := runtime.Encode(widget.Codec, w)
	require.NoError(t, err)
	require.JSONEq(t, `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"a","namespace":"ns"},"spec":{"replicas":3},"status":{}}`, string(data))
	out, err := runtime.Decode(widget.Codec, data)
	require.NoError(t, err)
	require.Equal(t, int64(3), out.(*widget.Widget).Spec.Replicas)

	u, err := runtime.Decode(widget.UnstructuredCodec, data)
	require.NoError(t, err)
	_, f, err := widget.GetAttrs(u)
	require.NoError(t, err)
	require.Equal(t, "a", f["metadata.name"])
}

func TestKeys(t *testing.T) {
	require.Equal(t, "/widgets/ns/a", widget.Key("ns", "a"))
	require.Equal(t, "/widgets/ns", widget.NamespaceKey("ns"))
	require.Equal(t, "/widgets", widget.NamespaceKey(""))
	k, err := widget.KeyOf(widget.NewWidget("ns", "a"))
	require.NoError(t, err)
	require.Equal(t, "/widgets/ns/a", k)
	_, err = widget.KeyOf(widget.NewWidget("", "a"))
	require.ErrorIs(t, err, widget.ErrNoKey)
	_, _, err = widget.GetAttrs(&unstructured.UnstructuredList{})
	require.ErrorIs(t, err, widget.ErrNotWidget)
}
