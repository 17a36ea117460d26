package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Media types accepted in request bodies.
const (
	mediaJSON       = "application/json"
	mediaMergePatch = "application/merge-patch+json"
	mediaJSONPatch  = "application/json-patch+json"
	mediaApplyPatch = "application/apply-patch+yaml"
)

// readBody checks the request's Content-Type against accepted (415
// otherwise) and reads at most MaxRequestBodyBytes of body (413 beyond).
// An empty body is returned as nil when allowEmpty, else it is 400. A
// YAML body (when accepted) is returned converted to JSON.
func (s *Server) readBody(w http.ResponseWriter, req *http.Request, allowEmpty bool, accepted ...string) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, s.cfg.MaxRequestBodyBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierrors.NewRequestEntityTooLargeError(
				fmt.Sprintf("limit is %d bytes", s.cfg.MaxRequestBodyBytes))
		}
		return nil, badRequest(fmt.Sprintf("reading request body: %v", err))
	}
	if len(body) == 0 {
		if allowEmpty {
			return nil, nil
		}
		return nil, badRequest("request body is empty")
	}
	ct := req.Header.Get("Content-Type")
	mt, _, perr := mime.ParseMediaType(ct)
	if perr != nil || !contains(accepted, mt) {
		return nil, unsupportedMediaType(ct, accepted)
	}
	if mt == mediaYAML {
		return yamlToJSON(body)
	}
	return body, nil
}

func unsupportedMediaType(got string, accepted []string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure,
		Code:   http.StatusUnsupportedMediaType,
		Reason: metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the body of the request was in an unknown format (%q) - accepted media types include: %v",
			got, accepted),
	}}
}

// decodeJSONObject decodes a JSON object, with integers as int64 as the
// unstructured helpers expect. Anything but one JSON object is 400.
func decodeJSONObject(body []byte) (map[string]any, error) {
	var v any
	if err := utiljson.Unmarshal(body, &v); err != nil {
		return nil, badRequest(fmt.Sprintf("malformed JSON: %v", err))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, badRequest("the request body must be a JSON object")
	}
	return obj, nil
}

// acceptsJSON reports whether an Accept header allows plain JSON, the only
// representation served: no header, application/json (with any parameter
// but "as", which asks for another shape such as Table), application/* or
// */*.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
			if err != nil {
				continue
			}
			switch mt {
			case mediaJSON, "application/*", "*/*":
				if params["as"] == "" {
					return true
				}
			}
		}
	}
	return false
}

func notAcceptable(accept string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: fmt.Sprintf("only application/json is served; the Accept header %q does not allow it", accept),
	}}
}

// unprocessable is a 422 for a request that is well formed but cannot be
// carried out.
func unprocessable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: msg,
	}}
}
