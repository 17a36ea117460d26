package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

func TestUnwrapProtobuf(t *testing.T) {
	inner := protowire.AppendTag(nil, 1, protowire.BytesType)
	inner = protowire.AppendString(inner, "get")
	inner = protowire.AppendTag(inner, 3, protowire.VarintType)
	inner = protowire.AppendVarint(inner, 7)
	unknown := protowire.AppendTag(nil, 1, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, []byte("typemeta"))
	unknown = protowire.AppendTag(unknown, 2, protowire.BytesType)
	unknown = protowire.AppendBytes(unknown, inner)
	raw, err := UnwrapProtobuf(append([]byte("k8s\x00"), unknown...))
	require.NoError(t, err)
	f, err := ProtobufFields(raw)
	require.NoError(t, err)
	require.Equal(t, "get", string(f[1]))
	require.NotContains(t, f, protowire.Number(3), "varints are skipped")

	_, err = UnwrapProtobuf([]byte(`{"kind":"x"}`))
	require.Error(t, err)
	_, err = UnwrapProtobuf(append([]byte("k8s\x00"), 0x12, 0x50, 1))
	require.Error(t, err, "a truncated field")
}
