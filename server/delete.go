package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversionscheme "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilptr "k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/storage"
)

// unsafeDeleteVerb is the verb Kubernetes authorizes, on top of delete,
// for a delete with ignoreStoreReadErrorWithClusterBreakingPotential.
const unsafeDeleteVerb = "unsafe-delete-ignore-read-errors"

// deleteOptions reads a delete's DeleteOptions: from the body (JSON or
// YAML) when there is one, else from the query, as Kubernetes does. A
// malformed body or query is 400; options Kubernetes' validation refuses
// (an unknown propagationPolicy, preconditions together with
// ignoreStoreReadErrorWithClusterBreakingPotential, ...) are 422 Invalid
// with its messages.
func (s *Server) deleteOptions(w http.ResponseWriter, req *http.Request) (*metav1.DeleteOptions, error) {
	q := req.URL.Query()
	wr, err := s.readWrite(w, req, deleteWrite)
	if err != nil {
		return nil, err
	}
	opts := &metav1.DeleteOptions{}
	if wr.body != nil {
		if err := utiljson.Unmarshal(wr.body, opts); err != nil {
			return nil, badRequest(fmt.Sprintf("malformed DeleteOptions: %v", err))
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, badRequest(err.Error())
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

// serveDelete answers DELETE on an object through the registry.
// DeleteOptions may carry preconditions on uid and resourceVersion (409
// when they fail), dryRun, and
// ignoreStoreReadErrorWithClusterBreakingPotential: the unsafe delete of
// an object whose stored value cannot be read (see serveUnsafeDelete). An
// object with finalizers is not deleted but marked (deletionTimestamp,
// deletionGracePeriodSeconds 0) until its last finalizer is removed. The
// response (200) is the last state of the object, or the marked object.
func (s *Server) serveDelete(w http.ResponseWriter, req *http.Request, t target) {
	opts, err := s.deleteOptions(w, req)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	if utilptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		s.serveUnsafeDelete(w, req, t, opts)
		return
	}
	out := &unstructured.Unstructured{}
	if _, err := t.res.registry.Delete(req.Context(), t.objectKey(), out, registryDeleteOptions(req, opts)); err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	s.writeObject(w, req, http.StatusOK, t.res, out)
}

// errUnsafeDryRun stops a dry-run unsafe delete at the point where the
// store would delete the unreadable value.
var errUnsafeDryRun = errors.New("dry run: the unreadable value would be deleted")

// preconditions are the storage preconditions of opts (nil for none).
func preconditions(opts *metav1.DeleteOptions) *storage.Preconditions {
	p := opts.Preconditions
	if p == nil || (p.UID == nil && p.ResourceVersion == nil) {
		return nil
	}
	pre := &storage.Preconditions{ResourceVersion: p.ResourceVersion}
	if p.UID != nil {
		uid := types.UID(*p.UID)
		pre.UID = &uid
	}
	return pre
}

// allowDeletion is the validateDeletion of the server's deletes: no
// admission checks.
func allowDeletion(context.Context, runtime.Object) error { return nil }

// registryDeleteOptions are the registry's options for a delete with
// opts: its preconditions, and a dry run when the query or the body asks
// for one.
func registryDeleteOptions(req *http.Request, opts *metav1.DeleteOptions) registry.DeleteOptions {
	return registry.DeleteOptions{Preconditions: preconditions(opts), Validate: allowDeletion,
		DryRun: isDryRun(req) || len(opts.DryRun) > 0}
}

// serveUnsafeDelete removes an object whose stored value cannot be read
// (corrupt bytes, a lost encryption key): Kubernetes'
// ignoreStoreReadErrorWithClusterBreakingPotential, which maps to the
// store's DeleteOptions.IgnoreStoreReadError. The options were validated
// (no preconditions, propagationPolicy, gracePeriodSeconds or
// orphanDependents); with an Authorizer the user also needs the verb
// unsafe-delete-ignore-read-errors on the object, as Kubernetes requires.
// An object that can be read is not deleted this way (422). A dry run goes
// as far as the store's last check before the delete. The answer is a
// Success Status, there being no object to return.
func (s *Server) serveUnsafeDelete(w http.ResponseWriter, req *http.Request, t target, opts *metav1.DeleteOptions) {
	if err := s.authorizeVerb(req, t, unsafeDeleteVerb); err != nil {
		s.writeError(w, req, err)
		return
	}
	dryRun := isDryRun(req) || len(opts.DryRun) > 0
	validate := allowDeletion
	if dryRun {
		// The store calls validateDeletion just before it would delete a
		// value it cannot read; refusing there checks everything else.
		validate = func(context.Context, runtime.Object) error { return errUnsafeDryRun }
	}
	out := &unstructured.Unstructured{}
	err := t.res.Storage.Delete(req.Context(), t.objectKey(), out, nil, validate, nil,
		storage.DeleteOptions{IgnoreStoreReadError: true})
	switch {
	case dryRun && errors.Is(err, errUnsafeDryRun):
		err = nil
	case dryRun && err == nil:
		err = errors.New("the store deleted an object on a dry run: it did not call validateDeletion")
	}
	if err != nil {
		s.writeError(w, req, t.res.objectError(err, t.name))
		return
	}
	if !dryRun {
		s.log.Warn("unsafe delete: removed an object whose stored value could not be read",
			"resource", t.res.Plural, "namespace", t.namespace, "name", t.name, "user", auth.UserFrom(req.Context()).Name)
	}
	writeJSON(w, http.StatusOK, &metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusSuccess, Code: http.StatusOK,
		Details: &metav1.StatusDetails{Name: t.name, Group: t.res.Group, Kind: t.res.Plural},
	})
}
