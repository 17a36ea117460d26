package server

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
)

// serveApply answers a server-side apply: PATCH with
// application/apply-patch+yaml, a required fieldManager and optional
// force. The merge, the ownership bookkeeping in managedFields and the
// conflict detection are apimachinery's field manager (structured-merge-
// diff over the resource's schema). A conflict is 409 naming the managers
// and fields; force takes the fields over. Applying to an object that does
// not exist creates it (201). The result is validated like any write.
func (s *Server) serveApply(w http.ResponseWriter, req *http.Request, t target) {
	wr, err := request.ReadWrite(w, req, request.ApplyWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	patch, err := t.res.decodeApplyPatch(w, wr, t)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	wantRV := (&unstructured.Unstructured{Object: patch}).GetResourceVersion()
	out, res, err := s.storeUpdate(req, t, true, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		created := cur.GetResourceVersion() == ""
		live := cur
		if created {
			live = t.res.EmptyObject()
			live.SetName(t.name)
			live.SetNamespace(t.namespace)
		}
		applied, err := t.res.Apply(live, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(patch)}, wr.Manager, wr.Force)
		if err != nil {
			if _, ok := err.(apierrors.APIStatus); ok {
				return nil, err
			}
			return nil, unprocessable(fmt.Sprintf("the apply patch cannot be applied: %v", err))
		}
		u, ok := applied.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("field manager returned %T, want *unstructured.Unstructured", applied)
		}
		next, err := t.res.Normalize(u.Object, t.name, t.namespace)
		if err != nil {
			return nil, err
		}
		if created {
			next.SetResourceVersion("")
			if wantRV != "" || t.subresource != "" {
				return nil, apierrors.NewNotFound(k8sschema.GroupResource{Group: t.res.Group, Resource: t.res.Plural}, t.name)
			}
			t.res.dropStatusOnCreate(next)
			return next, nil
		}
		return next, t.res.checkWrite(cur, next, wantRV, t.subresource)
	})
	if err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	code := http.StatusOK
	if res.Created {
		code = http.StatusCreated
	}
	s.writeObject(w, req, code, t.res, out)
}

// decodeApplyPatch decodes an apply patch (YAML or JSON), applies
// fieldValidation to it, and checks what can be checked on a partial
// object: its apiVersion and kind, its name and namespace against the URL,
// and the types of the values it sets (required fields are checked on the
// merged result).
func (r *resource) decodeApplyPatch(w http.ResponseWriter, wr *request.Write, t target) (map[string]any, error) {
	js, dups, err := wire.YAMLToJSON(wr.Body)
	if err != nil {
		return nil, err
	}
	patch, err := wire.DecodeJSONObject(js)
	if err != nil {
		return nil, err
	}
	if err := schema.EnforceFieldValidation(w.Header(), wr.FieldValidation, append(dups, schema.FieldProblems(r.Schema, js, patch)...)); err != nil {
		return nil, err
	}
	if err := r.CheckTypeMeta(patch); err != nil {
		return nil, err
	}
	if err := r.CheckWritable(patch, t.name); err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: patch}
	if _, ok := patch["metadata"].(map[string]any); !ok && patch["metadata"] != nil {
		return nil, badRequest("metadata must be an object")
	}
	if n := u.GetName(); n == "" {
		u.SetName(t.name)
	} else if n != t.name {
		return nil, badRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, t.name))
	}
	if ns := u.GetNamespace(); r.Namespaced && ns != "" && ns != t.namespace {
		return nil, schema.ErrNamespaceMismatch
	}
	var errs field.ErrorList
	for _, e := range r.ValidationErrors(patch) {
		if e.Type != field.ErrorTypeRequired {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(k8sschema.GroupKind{Group: r.Group, Kind: r.Kind}, t.name, errs)
	}
	return patch, nil
}
