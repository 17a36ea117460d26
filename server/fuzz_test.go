package server

import (
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server/wire"
)

func fuzzResource() *resource {
	r := &resource{Resource: Resource{Group: group, Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
		GetAttrs: widget.GetAttrs, KeyRoot: "/widgets"}, gvString: "demo.listwatch.dev/v1", listKind: "WidgetList",
		fields: map[string]bool{"metadata.name": true, "metadata.namespace": true, "spec.nodeName": true}}
	return r
}

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
	r := fuzzResource()
	f.Fuzz(func(t *testing.T, body []byte, ns, name string) {
		obj, err := decodeJSONObject(body)
		if err != nil {
			return
		}
		if ns == "" || !validSegment(ns) || (name != "" && !validSegment(name)) {
			return
		}
		u, err := r.normalize(obj, target{res: r, namespace: ns, name: name})
		if err != nil {
			if st := statusFor(err); st.Code != 400 && st.Code != 422 {
				t.Fatalf("status %d, want 400 or 422: %v", st.Code, err)
			}
			return
		}
		if u.GetNamespace() != ns || u.GetName() == "" || (name != "" && u.GetName() != name) {
			t.Fatalf("normalized identity %s/%s for %s/%s", u.GetNamespace(), u.GetName(), ns, name)
		}
		if _, err := appendObject(nil, u, r); err != nil {
			t.Fatalf("normalized object does not encode: %v", err)
		}
	})
}

// FuzzJSONPatch: any patch applies or fails with an error, never a panic,
// and what it yields still encodes.
func FuzzJSONPatch(f *testing.F) {
	f.Add(`{"a":[1,{"b":2}]}`, `[{"op":"add","path":"/a/1/c","value":3},{"op":"move","from":"/a/0","path":"/x"}]`)
	f.Add(`{"a":{}}`, `[{"op":"copy","from":"/a","path":"/a/b"},{"op":"test","path":"/a/b","value":{}}]`)
	f.Add(`[]`, `[{"op":"add","path":"/-","value":1},{"op":"replace","path":"/0","value":null}]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		var d any
		if utiljson.Unmarshal([]byte(doc), &d) != nil {
			return
		}
		p, err := decodeJSONPatch([]byte(patch), 1<<20)
		if err != nil {
			if st := statusFor(err); st.Code != 400 && st.Code != 413 {
				t.Fatalf("patch %q: status %d, want 400 or 413", patch, st.Code)
			}
			return
		}
		out, err := p.apply(d)
		if err != nil {
			return
		}
		if _, err := wire.AppendJSON(nil, out); err != nil {
			t.Fatalf("patched document does not encode: %v", err)
		}
	})
}
