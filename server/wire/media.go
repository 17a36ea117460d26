package wire

import (
	"fmt"
	"mime"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Media types of request and response bodies.
const (
	MediaJSON       = "application/json"
	MediaYAML       = "application/yaml" // accepted in create, update and delete bodies, served on request
	MediaMergePatch = "application/merge-patch+json"
	MediaJSONPatch  = "application/json-patch+json"
	MediaApplyPatch = "application/apply-patch+yaml"
)

// DecodeJSONObject decodes a JSON object, with integers as int64 as the
// unstructured helpers expect. Anything but one JSON object is 400.
func DecodeJSONObject(body []byte) (map[string]any, error) {
	var v any
	if err := utiljson.Unmarshal(body, &v); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("malformed JSON: %v", err))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, apierrors.NewBadRequest("the request body must be a JSON object")
	}
	return obj, nil
}

// AcceptsJSON reports whether an Accept header allows plain JSON, the only
// representation served: no header, application/json (with any parameter
// but "as", which asks for another shape such as Table), application/* or
// */*.
func AcceptsJSON(values []string) bool {
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
			case MediaJSON, "application/*", "*/*":
				if params["as"] == "" {
					return true
				}
			}
		}
	}
	return false
}

// NotAcceptable is the 406 of a request whose Accept header allows nothing
// served.
func NotAcceptable(accept string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReasonNotAcceptable,
		Message: fmt.Sprintf("only application/json is served; the Accept header %q does not allow it", accept),
	}}
}
