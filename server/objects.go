package server

import (
	"fmt"
	"net/http"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// serveGet answers GET on one object; ?watch=true watches just that object.
func (s *Server) serveGet(w http.ResponseWriter, req *http.Request, t target) {
	q := req.URL.Query()
	watch, err := request.ParseBool(q, "watch")
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	if watch {
		s.serveObjectWatch(w, req, t)
		return
	}
	rv, err := storage.ParseRV(q.Get("resourceVersion"))
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	out := &unstructured.Unstructured{}
	opts := storage.GetOptions{ResourceVersion: rv}
	if err := t.res.Storage.Get(req.Context(), t.objectKey(), opts, out); err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	if schema.WantsTable(req.Header.Values("Accept")) {
		s.writeTable(w, req, t.res, []unstructured.Unstructured{*out}, nil)
		return
	}
	s.writeObject(w, req, http.StatusOK, t.res, out)
}

// serveObjectWatch watches one object: a watch of its collection with the
// field selector metadata.name=<name> added to the request's selectors.
func (s *Server) serveObjectWatch(w http.ResponseWriter, req *http.Request, t target) {
	p, err := request.ParseList(req.URL.Query(), t.res.fields, t.res.GetAttrs)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	p.Options.Predicate.Field = fields.AndSelectors(p.Options.Predicate.Field, fields.OneTermEqualSelector("metadata.name", t.name))
	t.name = ""
	s.serveWatch(w, req, t, p)
}

// writeObject writes one object.
func (s *Server) writeObject(w http.ResponseWriter, req *http.Request, code int, r *resource, u *unstructured.Unstructured) {
	b, err := r.wire.AppendObject(nil, u)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	writeBody(w, code, b)
}

// serveCreate answers POST on a collection.
func (s *Server) serveCreate(w http.ResponseWriter, req *http.Request, t target) {
	wr, err := request.ReadWrite(w, req, request.ObjectWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	u, err := decodeObject(w, wr, t)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	t.res.dropStatusOnCreate(u)
	u = t.res.RecordUpdate(t.res.EmptyObject(), u, wr.Manager)
	t.name = u.GetName()
	if err := t.res.CheckStorable(u); err != nil {
		s.writeError(w, req, err)
		return
	}
	out := &unstructured.Unstructured{}
	opts := registry.CreateOptions{DryRun: request.IsDryRun(req)}
	err = t.res.registry.Create(req.Context(), t.objectKey(), u, out, opts)
	// A name made from generateName that is taken is made again, as
	// kube-apiserver does: 5 random characters collide about once in
	// 6,000 creates of one prefix.
	for attempt := 1; attempt < maxGenerateNameAttempts && storage.IsCode(err, storage.CodeKeyExists) && nameGenerated(wr); attempt++ {
		u.SetName(u.GetGenerateName() + utilrand.String(generatedSuffixLen))
		t.name = u.GetName()
		err = t.res.registry.Create(req.Context(), t.objectKey(), u, out, opts)
	}
	if err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	s.writeObject(w, req, http.StatusCreated, t.res, out)
}

// maxGenerateNameAttempts bounds the names a create with generateName
// tries (kube-apiserver's bound, since its RetryGenerateName); each
// generated name is generateName plus generatedSuffixLen random
// characters, as schema's Normalize makes the first.
const (
	maxGenerateNameAttempts = 8
	generatedSuffixLen      = 5
)

// nameGenerated reports whether the create's body named no object but
// gave a generateName: the server made the name.
func nameGenerated(wr *request.Write) bool {
	obj, err := wire.DecodeJSONObject(wr.Body)
	if err != nil {
		return false
	}
	md, _ := obj["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	gen, _ := md["generateName"].(string)
	return name == "" && gen != ""
}

// serveUpdate answers PUT on an object. A resourceVersion in the body must
// equal the stored one (409 Conflict otherwise); without one the update is
// unconditional. The object must exist (404).
func (s *Server) serveUpdate(w http.ResponseWriter, req *http.Request, t target) {
	wr, err := request.ReadWrite(w, req, request.ObjectWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	next, err := decodeObject(w, wr, t)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	wantRV := next.GetResourceVersion()
	s.update(w, req, t, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		u := next.DeepCopy()
		if err := t.res.checkWrite(cur, u, wantRV, t.subresource); err != nil {
			return nil, err
		}
		return t.res.RecordUpdate(cur, u, wr.Manager), nil
	})
}

// checkWrite enforces the optimistic-concurrency precondition wantRV
// (when set) and applies the status subresource's rules for a write
// through sub ("" for the object itself). The registry then carries the
// server-owned metadata over from cur to next.
func (r *resource) checkWrite(cur, next *unstructured.Unstructured, wantRV, sub string) error {
	if wantRV != "" && wantRV != cur.GetResourceVersion() {
		return apierrors.NewConflict(k8sschema.GroupResource{Group: r.Group, Resource: r.Plural}, cur.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	r.applySubresourcePolicy(cur, next, sub)
	return nil
}

// servePatch answers PATCH on an object with an RFC 7386 merge patch
// (application/merge-patch+json) or an RFC 6902 JSON patch
// (application/json-patch+json). A metadata.resourceVersion that the patch
// sets is a precondition (409 when stale); a JSON patch that cannot be
// applied (missing path, failed test) is 422.
func (s *Server) servePatch(w http.ResponseWriter, req *http.Request, t target) {
	if isApplyPatch(req) {
		s.serveApply(w, req, t)
		return
	}
	wr, err := request.ReadWrite(w, req, request.PatchWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	apply, err := wr.Patcher(s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	var dups []string // fields the patch itself gives twice
	if wr.MediaType == wire.MediaMergePatch {
		dups = schema.FieldProblems(t.res.Schema, wr.Body, map[string]any{})
	}
	s.update(w, req, t, func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		merged, err := apply(cur.DeepCopy().Object)
		if err != nil {
			return nil, err
		}
		obj, ok := merged.(map[string]any)
		if !ok {
			return nil, badRequest("the patched object is not a JSON object")
		}
		problems := append(slices.Clone(dups), schema.FieldProblems(t.res.Schema, nil, obj)...)
		if err := schema.EnforceFieldValidation(w.Header(), wr.FieldValidation, problems); err != nil {
			return nil, err
		}
		next, err := t.res.Normalize(obj, t.name, t.namespace)
		if err != nil {
			return nil, err
		}
		if next.GetNamespace() != cur.GetNamespace() {
			return nil, badRequest("metadata.namespace cannot be changed")
		}
		if err := t.res.checkWrite(cur, next, next.GetResourceVersion(), t.subresource); err != nil {
			return nil, err
		}
		return t.res.RecordUpdate(cur, next, wr.Manager), nil
	})
}

// update runs a read-modify-write of t's object with mutate and writes the
// stored result.
func (s *Server) update(w http.ResponseWriter, req *http.Request, t target,
	mutate func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error)) {
	out, _, err := s.storeUpdate(req, t, false, mutate)
	if err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	s.writeObject(w, req, http.StatusOK, t.res, out)
}

// storeUpdate runs a read-modify-write of t's object with mutate through
// the registry (which applies Kubernetes' metadata rules to what mutate
// returns) and returns the stored result. With allowCreate, a missing
// object is handed to mutate empty (no resourceVersion) and created. A
// dry run writes nothing. Whatever mutate returns must pass
// checkStorable. An update that removes the last finalizer of an object
// being deleted deletes it; out is then its last state.
func (s *Server) storeUpdate(req *http.Request, t target, allowCreate bool,
	mutate func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, registry.UpdateResult, error) {
	mutate = storable(t.res, mutate)
	out := &unstructured.Unstructured{}
	opts := registry.UpdateOptions{AllowCreate: allowCreate, DryRun: request.IsDryRun(req)}
	res, err := t.res.registry.Update(req.Context(), t.objectKey(), out, opts, func(input runtime.Object) (runtime.Object, error) {
		cur, ok := input.(*unstructured.Unstructured)
		if !ok {
			return nil, fmt.Errorf("storage returned %T, want *unstructured.Unstructured", input)
		}
		return mutate(cur)
	})
	if err != nil {
		return nil, res, err
	}
	return out, res, nil
}

// storable wraps mutate so that its result is refused unless checkStorable
// accepts it.
func storable(r *resource, mutate func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error)) func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return func(cur *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		next, err := mutate(cur)
		if err != nil {
			return nil, err
		}
		if err := r.CheckStorable(next); err != nil {
			return nil, err
		}
		return next, nil
	}
}

// decodeObject decodes a create or update body, applies fieldValidation to
// it (warnings go to w's header) and normalizes it for t (see normalize).
func decodeObject(w http.ResponseWriter, wr *request.Write, t target) (*unstructured.Unstructured, error) {
	obj, err := wire.DecodeJSONObject(wr.Body)
	if err != nil {
		return nil, err
	}
	problems := append(wr.Duplicates, schema.FieldProblems(t.res.Schema, wr.Body, obj)...)
	if err := schema.EnforceFieldValidation(w.Header(), wr.FieldValidation, problems); err != nil {
		return nil, err
	}
	return t.res.Normalize(obj, t.name, t.namespace)
}
