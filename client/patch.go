package client

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/storage"
)

// Patch is a patch of one object: its type and its bytes, computed from
// the object being patched.
type Patch interface {
	// Type is the patch's media type: types.MergePatchType or
	// types.JSONPatchType (the HTTP client also sends
	// types.StrategicMergePatchType and types.ApplyPatchType).
	Type() types.PatchType
	// Data returns the patch for obj.
	Data(obj Object) ([]byte, error)
}

// RawPatch is a patch given as bytes.
func RawPatch(t types.PatchType, data []byte) Patch { return rawPatch{t, data} }

type rawPatch struct {
	t    types.PatchType
	data []byte
}

func (p rawPatch) Type() types.PatchType       { return p.t }
func (p rawPatch) Data(Object) ([]byte, error) { return p.data, nil }

// MergeFrom returns the JSON merge patch (RFC 7386) that turns original
// into the object Patch is called with: take a copy, change it, patch.
//
//	before := w.DeepCopy()
//	w.Spec.Color = "blue"
//	err := c.Patch(ctx, w, client.MergeFrom(before))
func MergeFrom(original Object) Patch { return mergeFrom{original} }

type mergeFrom struct{ original Object }

func (p mergeFrom) Type() types.PatchType { return types.MergePatchType }

func (p mergeFrom) Data(obj Object) ([]byte, error) {
	from, err := json.Marshal(p.original)
	if err != nil {
		return nil, fmt.Errorf("client: merge patch: encoding the original: %w", err)
	}
	to, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("client: merge patch: encoding the object: %w", err)
	}
	return jsonpatch.CreateMergePatch(from, to)
}

// applyPatch applies a merge or JSON patch to the JSON document cur.
func applyPatch(t types.PatchType, cur, patch []byte) ([]byte, error) {
	switch t {
	case types.MergePatchType:
		out, err := jsonpatch.MergePatch(cur, patch)
		if err != nil {
			return nil, storage.NewInvalidArgumentError("invalid merge patch", err)
		}
		return out, nil
	case types.JSONPatchType:
		p, err := jsonpatch.DecodePatch(patch)
		if err != nil {
			return nil, storage.NewInvalidArgumentError("invalid JSON patch", err)
		}
		out, err := p.Apply(cur)
		if err != nil {
			return nil, storage.NewInvalidArgumentError("the JSON patch does not apply", err)
		}
		return out, nil
	}
	return nil, storage.NewInvalidArgumentError(fmt.Sprintf("patch type %q is not supported in process (merge and JSON patches are)", t), nil)
}
