package wire

import (
	"bytes"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MediaProtobuf is Kubernetes' protobuf media type, which client-go's
// typed clients send for built-in kinds (kubectl auth can-i's
// SelfSubjectAccessReview).
const MediaProtobuf = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every Kubernetes protobuf body ("k8s\x00").
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// UnwrapProtobuf returns the message inside a Kubernetes protobuf body:
// the magic prefix, then a runtime.Unknown whose field 2 (raw) holds it.
func UnwrapProtobuf(body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, errors.New("not a Kubernetes protobuf body (no k8s\\x00 prefix)")
	}
	f, err := ProtobufFields(body[len(protobufMagic):])
	if err != nil {
		return nil, err
	}
	return f[2], nil
}

// ProtobufFields returns the length-delimited fields (strings, bytes,
// messages) of the protobuf message b by number, the last of each; other
// fields are skipped.
func ProtobufFields(b []byte) (map[protowire.Number][]byte, error) {
	out := map[protowire.Number][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
			}
			out[num] = v
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return out, nil
}
