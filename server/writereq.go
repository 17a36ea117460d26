package server

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/crdschema"
	"github.com/listwatch/listwatch/server/request"
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

// writeSpec says what a write handler's request carries; readWrite checks
// it.
type writeSpec struct {
	// media are the accepted Content-Types of the body (415 otherwise).
	media []string
	// emptyBody allows no body at all (a delete's options may come from
	// the query instead); otherwise an empty body is 400.
	emptyBody bool
	// manager: the request names a field manager (fieldManager, else the
	// User-Agent).
	manager bool
	// fieldValidation: the request's fieldValidation applies to the body.
	fieldValidation bool
	// force is what the force parameter may be.
	force forceRule
}

// forceRule is how a write treats the force parameter.
type forceRule int

const (
	forceIgnored   forceRule = iota
	forceForbidden           // a non-apply patch: force is 422
	forceApply               // an apply: force is read, fieldManager is required
)

// The write requests the handlers serve.
var (
	objectWrite = writeSpec{media: []string{mediaJSON, mediaYAML}, manager: true, fieldValidation: true}
	patchWrite  = writeSpec{media: []string{mediaMergePatch, mediaJSONPatch, mediaApplyPatch}, manager: true,
		fieldValidation: true, force: forceForbidden}
	applyWrite      = writeSpec{media: []string{mediaApplyPatch}, manager: true, fieldValidation: true, force: forceApply}
	scaleWrite      = writeSpec{media: []string{mediaJSON, mediaYAML}, manager: true}
	scalePatchWrite = writeSpec{media: []string{mediaMergePatch, mediaJSONPatch}, manager: true}
	deleteWrite     = writeSpec{media: []string{mediaJSON, mediaYAML}, emptyBody: true}
)

// writeRequest is the checked preamble of a write: its query parameters
// and its body.
type writeRequest struct {
	// body is the request body, YAML converted to JSON; nil when empty
	// and allowed.
	body []byte
	// mediaType is the body's Content-Type without parameters.
	mediaType string
	// manager is the field manager (see fieldManagerName).
	manager string
	// fieldValidation is the fieldValidation mode ("" without the spec's
	// fieldValidation).
	fieldValidation string
	// force is the apply's force parameter.
	force bool
}

// readWrite checks what every write request shares, in this order:
// dryRun, force, the body (size limit, Content-Type, YAML), fieldManager,
// fieldValidation; the first failure is the answer.
func (s *Server) readWrite(w http.ResponseWriter, req *http.Request, spec writeSpec) (*writeRequest, error) {
	q := req.URL.Query()
	if err := checkDryRun(q["dryRun"]); err != nil {
		return nil, err
	}
	if spec.force == forceForbidden && q.Has("force") {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch")})
	}
	body, err := s.readBody(w, req, spec.emptyBody, spec.media...)
	if err != nil {
		return nil, err
	}
	wr := &writeRequest{body: body}
	wr.mediaType, _, _ = mime.ParseMediaType(req.Header.Get("Content-Type"))
	if spec.manager {
		if wr.manager, err = fieldManagerName(req); err != nil {
			return nil, err
		}
	}
	if spec.force == forceApply && !q.Has("fieldManager") {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	if spec.fieldValidation {
		if wr.fieldValidation, err = crdschema.ParseFieldValidation(q.Get("fieldValidation")); err != nil {
			return nil, err
		}
	}
	if spec.force == forceApply {
		if wr.force, err = request.ParseBool(q, "force"); err != nil {
			return nil, err
		}
	}
	return wr, nil
}

// object decodes a create or update body, applies fieldValidation to it
// (warnings go to w's header) and normalizes it for t (see normalize).
func (wr *writeRequest) object(w http.ResponseWriter, t target) (*unstructured.Unstructured, error) {
	obj, err := decodeJSONObject(wr.body)
	if err != nil {
		return nil, err
	}
	problems := crdschema.FieldProblems(t.res.Schema, wr.body, obj)
	if err := crdschema.EnforceFieldValidation(w.Header(), wr.fieldValidation, problems); err != nil {
		return nil, err
	}
	return t.res.normalize(obj, t)
}

// patcher decodes a merge or JSON patch body and returns the function
// applying it. A JSON patch's copy operations may add at most copyLimit
// bytes.
func (wr *writeRequest) patcher(copyLimit int64) (func(doc map[string]any) (any, error), error) {
	if wr.mediaType == mediaJSONPatch {
		p, err := decodeJSONPatch(wr.body, copyLimit)
		if err != nil {
			return nil, err
		}
		return func(doc map[string]any) (any, error) {
			out, err := p.apply(doc)
			if err != nil {
				return nil, unprocessable(fmt.Sprintf("the JSON patch cannot be applied: %v", err))
			}
			return out, nil
		}, nil
	}
	patch, err := decodeJSONObject(wr.body)
	if err != nil {
		return nil, err
	}
	return func(doc map[string]any) (any, error) { return mergePatch(doc, patch), nil }, nil
}
