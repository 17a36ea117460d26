package schema

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestNestingDepth(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{
		{"x", 0},
		{map[string]any{}, 1},
		{map[string]any{"a": 1}, 1},
		{map[string]any{"a": []any{map[string]any{}}, "b": "x"}, 3},
		{[]any{[]any{}, 1}, 2},
	} {
		require.Equal(t, c.want, NestingDepth(c.v, 1, 100), "%v", c.v)
	}
	u := &unstructured.Unstructured{Object: map[string]any{"a": map[string]any{"b": map[string]any{}}}}
	require.Equal(t, 2, NestingDepth(u.Object, 1, 2), "counting stops at the limit")
}

// TestCheckStorableBoundary: the last check before a write accepts an
// object whose deepest response (a watch event of a Table including it)
// nests exactly 10,000 levels and refuses one level more.
func TestCheckStorableBoundary(t *testing.T) {
	r, err := NewType(TypeConfig{Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget"})
	require.NoError(t, err)
	var deepest any = "leaf"
	for range maxStoredDepth - 1 {
		deepest = map[string]any{"a": deepest}
	}
	u := &unstructured.Unstructured{Object: map[string]any{"status": deepest}}
	require.NoError(t, r.CheckStorable(u))
	wrap := func(obj map[string]any) []byte {
		b, err := json.Marshal(map[string]any{"type": "ADDED", "object": map[string]any{"kind": "Table",
			"rows": []any{map[string]any{"object": obj}}}})
		require.NoError(t, err)
		return b
	}
	var back any
	require.NoError(t, json.Unmarshal(wrap(u.Object), &back), "the deepest response of the deepest storable object decodes")

	u.Object["status"] = map[string]any{"a": deepest}
	require.Error(t, r.CheckStorable(u))
	require.ErrorContains(t, json.Unmarshal(wrap(u.Object), &back), "exceeded max depth", "one level more is unreadable")
}
