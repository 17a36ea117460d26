package api

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The front handlers (protobuf bodies, strategic merge patch) give
// kubectl what kube-apiserver gives it on top of what the library's server
// serves; they do it by sending the server ordinary requests of their own.

// innerRequest sends method path?query with body to h and returns the
// recorded answer. The request keeps req's context and headers but its
// content type.
func innerRequest(h http.Handler, req *http.Request, method, path, contentType string, body []byte) *httptest.ResponseRecorder {
	r := req.Clone(req.Context())
	r.Method = method
	r.URL.Path = path
	r.RequestURI = ""
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Del("Content-Type")
	if body != nil {
		r.Header.Set("Content-Type", contentType)
	}
	r.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// copyAnswer writes rec's answer to w.
func copyAnswer(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// writeStatus answers a metav1.Status of code with message.
func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: message}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// mediaType is req's content type without parameters.
func mediaType(req *http.Request) string {
	ct, _, _ := strings.Cut(req.Header.Get("Content-Type"), ";")
	return strings.TrimSpace(strings.ToLower(ct))
}

// maxFrontBody bounds the bodies the front handlers read (the server's
// default limit).
const maxFrontBody = 3 << 20
