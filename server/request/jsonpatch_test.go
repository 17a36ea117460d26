package request

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/listwatch/listwatch/server/wire"
)

// patchDoc applies the JSON patch patch to the JSON document doc.
func patchDoc(doc, patch string) (any, error) {
	var d any
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return nil, err
	}
	p, err := DecodeJSONPatch([]byte(patch), 3<<20)
	if err != nil {
		return nil, err
	}
	return p.Apply(d)
}

// Cases from RFC 6902 Appendix A, plus edge cases and what
// github.com/evanphx/json-patch accepts beyond the RFC.
func TestJSONPatch(t *testing.T) {
	cases := []struct{ name, doc, patch, want string }{
		{"add member", `{"foo":"bar"}`, `[{"op":"add","path":"/baz","value":"qux"}]`, `{"baz":"qux","foo":"bar"}`},
		{"add array element", `{"foo":["bar","baz"]}`, `[{"op":"add","path":"/foo/1","value":"qux"}]`, `{"foo":["bar","qux","baz"]}`},
		{"remove member", `{"baz":"qux","foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`, `{"foo":"bar"}`},
		{"remove array element", `{"foo":["bar","qux","baz"]}`, `[{"op":"remove","path":"/foo/1"}]`, `{"foo":["bar","baz"]}`},
		{"replace", `{"baz":"qux","foo":"bar"}`, `[{"op":"replace","path":"/baz","value":"boo"}]`, `{"baz":"boo","foo":"bar"}`},
		{"move", `{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}`,
			`[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]`, `{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}`},
		{"move array element", `{"foo":["all","grass","cows","eat"]}`, `[{"op":"move","from":"/foo/1","path":"/foo/3"}]`,
			`{"foo":["all","cows","eat","grass"]}`},
		{"test ok", `{"baz":"qux","foo":["a",2,"c"]}`, `[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]`,
			`{"baz":"qux","foo":["a",2,"c"]}`},
		{"add nested", `{"foo":"bar"}`, `[{"op":"add","path":"/child","value":{"grandchild":{}}}]`, `{"child":{"grandchild":{}},"foo":"bar"}`},
		{"add array value", `{"foo":["bar"]}`, `[{"op":"add","path":"/foo/-","value":["abc","def"]}]`, `{"foo":["bar",["abc","def"]]}`},
		{"escaped pointer", `{"a/b":1,"m~n":2}`, `[{"op":"replace","path":"/a~1b","value":3},{"op":"remove","path":"/m~0n"}]`, `{"a/b":3}`},
		{"copy", `{"a":{"x":1}}`, `[{"op":"copy","from":"/a","path":"/b"},{"op":"replace","path":"/b/x","value":2}]`, `{"a":{"x":1},"b":{"x":2}}`},
		{"null value", `{"a":1}`, `[{"op":"add","path":"/b","value":null}]`, `{"a":1,"b":null}`},
		{"replace root", `{"a":1}`, `[{"op":"replace","path":"","value":{"b":2}}]`, `{"b":2}`},
		// Beyond RFC 6902, as Kubernetes (which uses the same library) accepts them:
		{"negative index", `{"foo":[1,2,3]}`, `[{"op":"remove","path":"/foo/-1"}]`, `{"foo":[1,2]}`},
		{"leading zero index", `{"foo":[1,2]}`, `[{"op":"remove","path":"/foo/01"}]`, `{"foo":[1]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := patchDoc(c.doc, c.patch)
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(b))
		})
	}
	errs := []struct{ name, doc, patch string }{
		{"remove missing", `{"foo":"bar"}`, `[{"op":"remove","path":"/baz"}]`},
		{"add to missing parent", `{"foo":"bar"}`, `[{"op":"add","path":"/baz/bat","value":"qux"}]`},
		{"index out of range", `{"foo":[1]}`, `[{"op":"add","path":"/foo/5","value":2}]`},
		{"test fails", `{"baz":"qux"}`, `[{"op":"test","path":"/baz","value":"bar"}]`},
		{"test number vs string", `{"a":1}`, `[{"op":"test","path":"/a","value":"1"}]`},
		{"unknown op", `{}`, `[{"op":"frob","path":"/a"}]`},
		{"missing value", `{}`, `[{"op":"add","path":"/a"}]`},
		{"bad pointer", `{}`, `[{"op":"add","path":"a","value":1}]`},
		{"move into itself", `{"a":{"b":{}}}`, `[{"op":"move","from":"/a","path":"/a/b/c"}]`},
		{"remove root", `{}`, `[{"op":"remove","path":""}]`},
		{"op not an object", `{}`, `[1]`},
		{"copies beyond the limit", `{"a":"` + strings.Repeat("x", 1000) + `"}`,
			`[` + strings.Repeat(`{"op":"copy","from":"/a","path":"/b"},`, 4000) + `{"op":"copy","from":"/a","path":"/c"}]`},
		{"too many operations", `{}`, `[` + strings.Repeat(`{"op":"test","path":"","value":{}},`, 10000) + `{"op":"test","path":"","value":{}}]`},
	}
	for _, c := range errs {
		_, err := patchDoc(c.doc, c.patch)
		require.Error(t, err, c.name)
	}
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
		p, err := DecodeJSONPatch([]byte(patch), 1<<20)
		if err != nil {
			var st apierrors.APIStatus
			if !errors.As(err, &st) || st.Status().Code != 400 && st.Status().Code != 413 {
				t.Fatalf("patch %q: %v, want a 400 or 413 status", patch, err)
			}
			return
		}
		out, err := p.Apply(d)
		if err != nil {
			return
		}
		if _, err := wire.AppendJSON(nil, out); err != nil {
			t.Fatalf("patched document does not encode: %v", err)
		}
	})
}
