package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// marshalPlain is json.Marshal without HTML escaping, the reference
// AppendJSON must match byte for byte.
func marshalPlain(tb testing.TB, v any) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(tb, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	cases := []any{
		nil, true, false, "", "plain", "quote\" back\\ nl\n cr\r tab\t ctl\x01\x1f del\x7f",
		"<html>&amp;", "ünïcödé 日本語 😀", "bad\xffutf8", "line\u2028sep\u2029", int64(0), int64(-42),
		int64(math.MaxInt64), 0.0, 1.5, -2.25, 1e-7, 1e21, 123456789.125, 1e-300, 5e-324,
		map[string]any{}, []any{}, map[string]any{"b": int64(1), "a": []any{"x", nil, map[string]any{"z": 1.5}}},
		map[string]any{"metadata": map[string]any{"name": "w", "labels": map[string]any{"app": "a"}}},
		int(7), []string{"typed"}, // fall back to encoding/json
	}
	for _, v := range cases {
		got, err := AppendJSON(nil, v)
		require.NoError(t, err, "%#v", v)
		require.Equal(t, string(marshalPlain(t, v)), string(got), "%#v", v)
	}
	_, err := AppendJSON(nil, math.NaN())
	require.Error(t, err)
	_, err = AppendJSON(nil, map[string]any{"x": math.Inf(1)})
	require.Error(t, err)
}

func FuzzAppendJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[true,null,"x\u2028"],"c":{"d":-1.5e-9}}`, `"\ud800"`, `[1e400]`, `{"":{"":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if utiljson.Unmarshal(data, &v) != nil {
			return
		}
		got, err := AppendJSON(nil, v)
		if err != nil {
			return
		}
		require.Equal(t, string(marshalPlain(t, v)), string(got))
	})
}
