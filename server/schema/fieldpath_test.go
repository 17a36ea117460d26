package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSimplePath(t *testing.T) {
	obj := map[string]any{"spec": map[string]any{"replicas": int64(3), "ports": []any{map[string]any{"n": int64(80)}}}}
	for path, want := range map[string]any{".spec.replicas": int64(3), "{.spec.ports[0].n}": int64(80)} {
		p, err := parseSimplePath(path)
		require.NoError(t, err, path)
		got, ok := p.get(obj)
		require.True(t, ok, path)
		require.Equal(t, want, got, path)
	}
	for _, path := range []string{".spec.missing", ".spec.ports[1].n", ".spec.replicas.x", ".spec[0]"} {
		p, err := parseSimplePath(path)
		require.NoError(t, err, path)
		_, ok := p.get(obj)
		require.False(t, ok, path)
	}
	for _, bad := range []string{"", ".", "spec.x", ".spec..x", ".a[x]", ".a[-1]", ".a[*]", ".a[?(@.x)]", ".a[0]b"} {
		_, err := parseSimplePath(bad)
		require.Error(t, err, bad)
	}
}
