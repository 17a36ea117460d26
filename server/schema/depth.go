package schema

import (
	"fmt"
	"iter"
	"maps"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// JSON decoders (encoding/json, sigs.k8s.io/json and apimachinery's
// number conversion) refuse values nested deeper than 10,000 objects and
// arrays. An object is never stored unless every response carrying it
// stays readable: a list wraps each item two levels deeper
// ({"items":[...]}), a watch event one ({"object":...}), a Table with
// includeObject=Object three ({"rows":[{"object":...}]}) and a watch
// event of such a Table four.
const (
	jsonDecoderMaxDepth = 10000
	// responseWrapDepth is the most levels a response adds above an
	// object: a watch event of a one-row Table that includes it.
	responseWrapDepth = 4
	// maxStoredDepth is the deepest nesting an object may have as stored.
	maxStoredDepth = jsonDecoderMaxDepth - responseWrapDepth
	// managedFieldsDepth is how much deeper than an object's deepest field
	// its managedFields entry goes: metadata.managedFields[i].fieldsV1
	// holds a tree mirroring the object's fields (f:status: {f:a: ...}),
	// starting four levels down and ending in an empty object per leaf.
	managedFieldsDepth = 5
	// maxWrittenDepth is the deepest an object sent by a client may nest:
	// checked before the field manager runs (whose cost grows with the
	// square of the depth), so that its managedFields fit maxStoredDepth.
	maxWrittenDepth = maxStoredDepth - managedFieldsDepth
)

// CheckWritable refuses (422) an object a client sends (a create or update
// body, a patched object, an apply patch) that nests deeper than
// maxWrittenDepth, before any further work is done on it. name is the
// URL's; a create has none, and the body's metadata.name (when it is a
// string) names the object in the error instead.
func (r *Type) CheckWritable(obj map[string]any, name string) error {
	if d := NestingDepth(obj, 1, maxWrittenDepth+1); d > maxWrittenDepth {
		if name == "" {
			if md, ok := obj["metadata"].(map[string]any); ok {
				name, _ = md["name"].(string)
			}
		}
		return r.tooDeep(name, fmt.Sprintf("the object nests more than %d levels deep", maxWrittenDepth))
	}
	return nil
}

// tooDeep is the 422 of an object whose nesting is refused.
func (r *Type) tooDeep(name, what string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Details: &metav1.StatusDetails{Group: r.group, Kind: r.plural, Name: name},
		Message: fmt.Sprintf("%s %q is invalid: %s; with the managedFields the server records (which mirror "+
			"the object's fields %d levels deeper) the lists and watch events carrying it would exceed the JSON "+
			"decoders' limit of %d levels, so it is not stored", r.kind, name, what, managedFieldsDepth, jsonDecoderMaxDepth),
	}}
}

// CheckStorable refuses (422) an object, in the final form it is about to
// be stored in (managedFields included), whose nesting would make it or a
// list of it unreadable. It is the last check of every write: create,
// update, patch and apply, dry run or not.
func (r *Type) CheckStorable(u *unstructured.Unstructured) error {
	if d := NestingDepth(u.Object, 1, maxStoredDepth+1); d > maxStoredDepth {
		return r.tooDeep(u.GetName(), fmt.Sprintf("as it would be stored, the object nests more than %d levels deep", maxStoredDepth))
	}
	return nil
}

// nestingDepth is the nesting depth of v, an unstructured JSON value, when
// it sits at level depth (an object or array at the top is level 1). It
// stops counting at limit, so a hostile object costs at most limit levels
// of recursion.
func NestingDepth(v any, depth, limit int) int {
	switch x := v.(type) {
	case map[string]any:
		return deepestOf(maps.Values(x), depth, limit)
	case []any:
		return deepestOf(slices.Values(x), depth, limit)
	}
	return depth - 1
}

// deepestOf is the nesting depth of an object or array at level depth
// whose members are elems, counted as nestingDepth counts.
func deepestOf(elems iter.Seq[any], depth, limit int) int {
	deepest := depth
	if depth >= limit {
		return depth
	}
	for e := range elems {
		if d := NestingDepth(e, depth+1, limit); d > deepest {
			deepest = d
			if deepest >= limit {
				return deepest
			}
		}
	}
	return deepest
}
