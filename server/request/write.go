package request

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
)

// mediaType is the Content-Type of req's body without parameters. A body
// without one is JSON, as kube-apiserver reads it (kubectl scale
// --current-replicas and client-go's scale client send none).
func mediaType(req *http.Request) (string, error) {
	ct := req.Header.Get("Content-Type")
	if ct == "" {
		return wire.MediaJSON, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	return mt, err
}

// readBody checks the request's Content-Type against accepted (415
// otherwise; none is JSON) and reads at most maxBytes of body (413
// beyond). An empty body is returned as nil when allowEmpty, else it is
// 400. A YAML body (when accepted) is returned converted to JSON.
//
// duplicates are the keys a YAML body gives twice (see wire.YAMLToJSON).
func readBody(w http.ResponseWriter, req *http.Request, maxBytes int64, allowEmpty bool, accepted ...string) (body []byte, duplicates []string, err error) {
	body, err = io.ReadAll(http.MaxBytesReader(w, req.Body, maxBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, nil, apierrors.NewRequestEntityTooLargeError(
				fmt.Sprintf("limit is %d bytes", maxBytes))
		}
		return nil, nil, bodyReadError(err)
	}
	if len(body) == 0 {
		if allowEmpty {
			return nil, nil, nil
		}
		return nil, nil, apierrors.NewBadRequest("request body is empty")
	}
	mt, perr := mediaType(req)
	if perr != nil || !slices.Contains(accepted, mt) {
		return nil, nil, unsupportedMediaType(req.Header.Get("Content-Type"), accepted)
	}
	if mt == wire.MediaYAML {
		return wire.YAMLToJSON(body)
	}
	return body, nil, nil
}

// bodyReadError is the answer to a body that could not be read: 408 when
// it did not arrive in time (the server's read deadline), else 400. The
// cause (socket addresses, the network's words) is not the client's
// business; the request log has the status.
func bodyReadError(err error) error {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusRequestTimeout, Reason: metav1.StatusReasonTimeout,
			Message: "the request body did not arrive in time",
		}}
	}
	return apierrors.NewBadRequest("the request body could not be read")
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

// WriteSpec says what a write handler's request carries; ReadWrite checks
// it.
type WriteSpec struct {
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
	// ObjectWrite is a create or update: a JSON or YAML object.
	ObjectWrite = WriteSpec{media: []string{wire.MediaJSON, wire.MediaYAML}, manager: true, fieldValidation: true}
	// PatchWrite is a merge, JSON or apply patch.
	PatchWrite = WriteSpec{media: []string{wire.MediaMergePatch, wire.MediaJSONPatch, wire.MediaApplyPatch}, manager: true,
		fieldValidation: true, force: forceForbidden}
	// ApplyWrite is a server-side apply.
	ApplyWrite = WriteSpec{media: []string{wire.MediaApplyPatch}, manager: true, fieldValidation: true, force: forceApply}
	// ScaleWrite is a PUT of a Scale.
	ScaleWrite = WriteSpec{media: []string{wire.MediaJSON, wire.MediaYAML}, manager: true}
	// ScalePatchWrite is a patch of a Scale.
	ScalePatchWrite = WriteSpec{media: []string{wire.MediaMergePatch, wire.MediaJSONPatch}, manager: true}
	// ReviewWrite is the creation of a SelfSubjectAccessReview or
	// SelfSubjectReview, in protobuf too (as kubectl sends them).
	ReviewWrite = WriteSpec{media: []string{wire.MediaJSON, wire.MediaYAML, wire.MediaProtobuf}}
	// DeleteWrite is a delete, whose options may come in the body.
	DeleteWrite = WriteSpec{media: []string{wire.MediaJSON, wire.MediaYAML}, emptyBody: true}
)

// Write is the checked preamble of a write: its query parameters and its
// body.
type Write struct {
	// Body is the request body, YAML converted to JSON; nil when empty
	// and allowed.
	Body []byte
	// MediaType is the body's Content-Type without parameters.
	MediaType string
	// Manager is the field manager (see FieldManager).
	Manager string
	// FieldValidation is the fieldValidation mode ("" without the spec's
	// fieldValidation).
	FieldValidation string
	// Force is the apply's force parameter.
	Force bool
	// Duplicates are the keys a YAML body gave twice (the last value
	// kept), worded for fieldValidation (see wire.YAMLToJSON).
	Duplicates []string
}

// ReadWrite checks what every write request shares, in this order:
// dryRun, force, the body (at most maxBody bytes, Content-Type, YAML),
// fieldManager, fieldValidation; the first failure is the answer.
func ReadWrite(w http.ResponseWriter, req *http.Request, spec WriteSpec, maxBody int64) (*Write, error) {
	q := req.URL.Query()
	if err := CheckDryRun(q["dryRun"]); err != nil {
		return nil, err
	}
	if spec.force == forceForbidden && q.Has("force") {
		return nil, apierrors.NewInvalid(k8sschema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "",
			field.ErrorList{field.Forbidden(field.NewPath("force"), "may not be specified for non-apply patch")})
	}
	body, dups, err := readBody(w, req, maxBody, spec.emptyBody, spec.media...)
	if err != nil {
		return nil, err
	}
	wr := &Write{Body: body, Duplicates: dups}
	wr.MediaType, _ = mediaType(req)
	if spec.manager {
		if wr.Manager, err = FieldManager(req); err != nil {
			return nil, err
		}
	}
	if spec.force == forceApply && !q.Has("fieldManager") {
		return nil, apierrors.NewInvalid(k8sschema.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "",
			field.ErrorList{field.Required(field.NewPath("fieldManager"), "is required for apply patch")})
	}
	if spec.fieldValidation {
		if wr.FieldValidation, err = schema.ParseFieldValidation(q.Get("fieldValidation")); err != nil {
			return nil, err
		}
	}
	if spec.force == forceApply {
		if wr.Force, err = ParseBool(q, "force"); err != nil {
			return nil, err
		}
	}
	return wr, nil
}

// Patcher decodes a merge or JSON patch body and returns the function
// applying it. A JSON patch's copy operations may add at most copyLimit
// bytes.
func (wr *Write) Patcher(copyLimit int64) (func(doc map[string]any) (any, error), error) {
	if wr.MediaType == wire.MediaJSONPatch {
		p, err := DecodeJSONPatch(wr.Body, copyLimit)
		if err != nil {
			return nil, err
		}
		return func(doc map[string]any) (any, error) {
			out, err := p.Apply(doc)
			if err != nil {
				return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
					Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
					Message: fmt.Sprintf("the JSON patch cannot be applied: %v", err)}}
			}
			return out, nil
		}, nil
	}
	patch, err := wire.DecodeJSONObject(wr.Body)
	if err != nil {
		return nil, err
	}
	return func(doc map[string]any) (any, error) { return MergePatch(doc, patch), nil }, nil
}
