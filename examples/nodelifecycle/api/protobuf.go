package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// protobufMediaType is Kubernetes' protobuf encoding of built-in types.
const protobufMediaType = "application/vnd.kubernetes.protobuf"

// protobufMagic starts every protobuf-encoded object: "k8s" and a zero.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// protoMessage is a k8s.io/api type's generated protobuf decoding.
type protoMessage interface {
	Unmarshal(data []byte) error
}

// protobufTypes are the Go types of the kinds a protobuf body may carry.
var protobufTypes = map[string]func() protoMessage{
	"Node": func() protoMessage { return &corev1.Node{} }, "Pod": func() protoMessage { return &corev1.Pod{} },
	"Lease":      func() protoMessage { return &coordinationv1.Lease{} },
	"Deployment": func() protoMessage { return &appsv1.Deployment{} }, "ReplicaSet": func() protoMessage { return &appsv1.ReplicaSet{} },
}

// ProtobufBodies turns request bodies in Kubernetes' protobuf encoding
// into JSON for next: typed client-go clients send the example's built-in
// kinds that way (kubectl create deployment does), and the library's
// server, which holds no Go types, reads JSON and YAML only (415
// otherwise). The envelope (magic, runtime.Unknown) names the kind; the
// k8s.io/api type decodes the payload. Answers stay JSON, which those
// clients also accept.
func ProtobufBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if mediaType(req) != protobufMediaType || req.Body == nil {
			next.ServeHTTP(w, req)
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, maxFrontBody+1))
		if err != nil || len(body) > maxFrontBody {
			writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge, "request body too large or unreadable")
			return
		}
		data, err := protobufToJSON(body)
		if err != nil {
			writeStatus(w, http.StatusUnsupportedMediaType, metav1.StatusReasonUnsupportedMediaType, err.Error())
			return
		}
		r := req.Clone(req.Context())
		r.Body = io.NopCloser(bytes.NewReader(data))
		r.ContentLength = int64(len(data))
		r.Header.Set("Content-Type", "application/json")
		next.ServeHTTP(w, r)
	})
}

// protobufToJSON decodes one protobuf-encoded object of a known kind and
// encodes it as JSON with its apiVersion and kind.
func protobufToJSON(body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, fmt.Errorf("protobuf body without the %q prefix", protobufMagic)
	}
	var u runtime.Unknown
	if err := u.Unmarshal(body[len(protobufMagic):]); err != nil {
		return nil, fmt.Errorf("protobuf envelope: %w", err)
	}
	newObj, ok := protobufTypes[u.Kind]
	if !ok {
		return nil, fmt.Errorf("protobuf bodies of kind %q are not served; send JSON", u.Kind)
	}
	obj := newObj()
	if err := obj.Unmarshal(u.Raw); err != nil {
		return nil, fmt.Errorf("protobuf %s: %w", u.Kind, err)
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	m["apiVersion"], m["kind"] = u.APIVersion, u.Kind
	if strings.TrimSpace(u.APIVersion) == "" {
		return nil, fmt.Errorf("protobuf %s without apiVersion", u.Kind)
	}
	return json.Marshal(m)
}
