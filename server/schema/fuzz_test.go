package schema

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/server/wire"
)

// FuzzNormalizeObject: any JSON body is accepted or rejected with a 400
// or 422, never a panic.
func FuzzNormalizeObject(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"w1","namespace":"ns","labels":{"a":"b"}},"spec":{"x":1}}`,
		`{"metadata":{"generateName":"g-"}}`, `{"metadata":{"name":"Bad_Name"}}`, `{"kind":1}`,
		`{"metadata":{"labels":{"a":1}}}`, `{"metadata":null}`, `[]`, `{"metadata":{"name":"w","namespace":"other"}}`,
	} {
		f.Add([]byte(s), "ns", "")
	}
	r, err := NewType(TypeConfig{Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true})
	if err != nil {
		f.Fatal(err)
	}
	// validSegment is what the server's router lets through as a path
	// segment.
	validSegment := func(s string) bool { return s != "" && s != "." && s != ".." }
	f.Fuzz(func(t *testing.T, body []byte, ns, name string) {
		obj, err := wire.DecodeJSONObject(body)
		if err != nil {
			return
		}
		if ns == "" || !validSegment(ns) || (name != "" && !validSegment(name)) {
			return
		}
		u, err := r.Normalize(obj, name, ns)
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) || st.Status().Code != 400 && st.Status().Code != 422 {
				t.Fatalf("%v, want a 400 or 422 status", err)
			}
			return
		}
		if u.GetNamespace() != ns || u.GetName() == "" || (name != "" && u.GetName() != name) {
			t.Fatalf("normalized identity %s/%s for %s/%s", u.GetNamespace(), u.GetName(), ns, name)
		}
		if _, err := r.wire.AppendObject(nil, u); err != nil {
			t.Fatalf("normalized object does not encode: %v", err)
		}
	})
}
