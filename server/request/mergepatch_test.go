package request

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The cases of RFC 7386 Appendix A.
func TestMergePatchRFC7386(t *testing.T) {
	cases := []struct{ name, target, patch, want string }{
		{"replace member", `{"a":"b"}`, `{"a":"c"}`, `{"a":"c"}`},
		{"add member", `{"a":"b"}`, `{"b":"c"}`, `{"a":"b","b":"c"}`},
		{"remove member", `{"a":"b"}`, `{"a":null}`, `{}`},
		{"remove one of two", `{"a":"b","b":"c"}`, `{"a":null}`, `{"b":"c"}`},
		{"array replaces", `{"a":["b"]}`, `{"a":"c"}`, `{"a":"c"}`},
		{"value replaces array", `{"a":"c"}`, `{"a":["b"]}`, `{"a":["b"]}`},
		{"nested", `{"a":{"b":"c"}}`, `{"a":{"b":"d","c":null}}`, `{"a":{"b":"d"}}`},
		{"array of objects replaces", `{"a":[{"b":"c"}]}`, `{"a":[1]}`, `{"a":[1]}`},
		{"arrays replace", `["a","b"]`, `["c","d"]`, `["c","d"]`},
		{"object replaced by array", `{"a":"b"}`, `["c"]`, `["c"]`},
		{"null patch", `{"a":"foo"}`, `null`, `null`},
		{"string patch", `{"a":"foo"}`, `"bar"`, `"bar"`},
		{"null member kept in target", `{"e":null}`, `{"a":1}`, `{"a":1,"e":null}`},
		{"non-object target", `[1,2]`, `{"a":"b","c":null}`, `{"a":"b"}`},
		{"deep create strips nulls", `{}`, `{"a":{"bb":{"ccc":null}}}`, `{"a":{"bb":{}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var target, patch any
			require.NoError(t, json.Unmarshal([]byte(c.target), &target))
			require.NoError(t, json.Unmarshal([]byte(c.patch), &patch))
			got, err := json.Marshal(MergePatch(target, patch))
			require.NoError(t, err)
			require.JSONEq(t, c.want, string(got))
		})
	}
}
