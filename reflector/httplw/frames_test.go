package httplw

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

func decodeUnstructured(b []byte) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	return u, u.UnmarshalJSON(b)
}

// readAll decodes every event of stream the way streamWatcher does.
func readAll(t *testing.T, stream string) ([]string, error) {
	t.Helper()
	r := newFrameReader(strings.NewReader(stream))
	var got []string
	for {
		ev, err := r.nextEvent(decodeUnstructured)
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		name := ""
		if u, ok := ev.Object.(*unstructured.Unstructured); ok {
			name = u.GetName()
		}
		got = append(got, string(ev.Type)+":"+name)
	}
}

func obj(name string) string {
	return `{"apiVersion":"v1","kind":"W","metadata":{"name":"` + name + `"},"data":"a}\"b"}`
}

func TestFrameReader(t *testing.T) {
	long := `{"apiVersion":"v1","kind":"W","metadata":{"name":"long"},"pad":"` + strings.Repeat("x", 200<<10) + `"}`
	cases := []struct {
		name, stream string
		want         []string
		wantErr      bool
	}{
		{"one per line", `{"type":"ADDED","object":` + obj("a") + "}\n" + `{"type":"DELETED","object":` + obj("b") + "}\n",
			[]string{"ADDED:a", "DELETED:b"}, false},
		{"keys reversed", `{"object":` + obj("a") + `,"type":"MODIFIED"}` + "\n", []string{"MODIFIED:a"}, false},
		{"spaces and CRLF and blank lines", "\r\n" + `  {"type":"ADDED","object":` + obj("a") + "}  \r\n\n", []string{"ADDED:a"}, false},
		{"extra member after object", `{"type":"ADDED","object":` + obj("a") + `,"x":1}` + "\n", []string{"ADDED:a"}, false},
		{"no final newline", `{"type":"ADDED","object":` + obj("a") + "}", []string{"ADDED:a"}, false},
		{"longer than the buffer", `{"type":"ADDED","object":` + long + "}\n" + `{"type":"ADDED","object":` + obj("b") + "}\n",
			[]string{"ADDED:long", "ADDED:b"}, false},
		{"pretty printed", "{\n  \"type\": \"ADDED\",\n  \"object\": " + obj("a") + "\n}\n{\"type\":\"DELETED\",\n\"object\":" + obj("b") + "}",
			[]string{"ADDED:a", "DELETED:b"}, false},
		{"several frames on a line", `{"type":"ADDED","object":` + obj("a") + `}{"type":"ADDED","object":` + obj("b") + "}\n" +
			`{"type":"DELETED","object":` + obj("c") + "}\n", []string{"ADDED:a", "ADDED:b", "DELETED:c"}, false},
		{"truncated frame", `{"type":"ADDED","object":{}`, nil, true},
		{"garbage", "{oops}\n", nil, true},
		{"ERROR frame", `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","code":410,"reason":"Expired"}}` + "\n",
			[]string{"ERROR:"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(t, c.stream)
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestCutFrame(t *testing.T) {
	typ, o, ok := cutFrame([]byte(`{"type":"BOOKMARK","object":{"a":1}}`))
	require.True(t, ok)
	require.Equal(t, watch.Bookmark, typ)
	require.Equal(t, `{"a":1}`, string(o))
	for _, bad := range []string{`{"object":{},"type":"X"}`, `{"type":"A\"B","object":{}}`, `{"type":"X","object":}`, `{"type":"X"}`} {
		_, _, ok := cutFrame([]byte(bad))
		require.False(t, ok, bad)
	}
}

// FuzzFrameReader: any stream yields events and then an error or EOF,
// never a panic or an endless loop.
func FuzzFrameReader(f *testing.F) {
	f.Add(`{"type":"ADDED","object":` + obj("a") + "}\n{\"type\":\"ERROR\",\"object\":{\"code\":410}}\n")
	f.Add("{\n\"type\":\"ADDED\",\"object\":{}}\n{\"type\":")
	f.Add(`{"type":"ADDED","object":{}}{"type":"X"}`)
	f.Fuzz(func(t *testing.T, stream string) {
		r := newFrameReader(strings.NewReader(stream))
		for i := 0; ; i++ {
			if i > len(stream)+1 {
				t.Fatalf("more events than bytes in %q", stream)
			}
			if _, err := r.nextEvent(decodeUnstructured); err != nil {
				return
			}
		}
	})
}
