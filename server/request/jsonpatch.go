package request

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// maxJSONPatchOperations bounds the operations of one JSON patch, as
// Kubernetes bounds them.
const maxJSONPatchOperations = 10000

// JSONPatch is a decoded RFC 6902 patch, applied by
// github.com/evanphx/json-patch (the implementation Kubernetes uses).
type JSONPatch struct {
	ops  jsonpatch.Patch
	opts *jsonpatch.ApplyOptions
}

// DecodeJSONPatch decodes an RFC 6902 patch. As in Kubernetes, negative
// array indices count from the end. copyLimit bounds how many
// bytes its copy operations may add to the document, so that a small
// patch cannot build a huge object.
func DecodeJSONPatch(body []byte, copyLimit int64) (*JSONPatch, error) {
	ops, err := jsonpatch.DecodePatch(body)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("malformed JSON patch (a JSON array of operations is expected): %v", err))
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"the JSON patch has %d operations, more than the %d allowed", len(ops), maxJSONPatchOperations))
	}
	opts := jsonpatch.NewApplyOptions()
	opts.AccumulatedCopySizeLimit = copyLimit
	return &JSONPatch{ops: ops, opts: opts}, nil
}

// Apply applies the patch to doc, a JSON document (integers as int64), and
// returns the patched document, with integers as int64.
func (p *JSONPatch) Apply(doc any) (any, error) {
	in, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	out, err := p.ops.ApplyWithOptions(in, p.opts)
	if err != nil {
		return nil, err
	}
	var v any
	if err := utiljson.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	return v, nil
}
