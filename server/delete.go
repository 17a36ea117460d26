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
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilptr "k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/request"
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
	wr, err := request.ReadWrite(w, req, request.DeleteWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		return nil, err
	}
	opts := &metav1.DeleteOptions{}
	if wr.Body != nil {
		if err := utiljson.Unmarshal(wr.Body, opts); err != nil {
			return nil, badRequest(fmt.Sprintf("malformed DeleteOptions: %v", err))
		}
	} else if err := metainternalversionscheme.ParameterCodec.DecodeParameters(q, metav1.SchemeGroupVersion, opts); err != nil {
		return nil, badRequest(err.Error())
	}
	if errs := metav1validation.ValidateDeleteOptions(opts); len(errs) > 0 {
		return nil, apierrors.NewInvalid(k8sschema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	return opts, nil
}

// serveDelete answers DELETE on an object through the registry.
// DeleteOptions may carry preconditions on uid and resourceVersion (409
// when they fail), dryRun, propagationPolicy (or orphanDependents), and
// ignoreStoreReadErrorWithClusterBreakingPotential: the unsafe delete of
// an object whose stored value cannot be read (see serveUnsafeDelete).
// The registry gives the object the garbage collector finalizer the
// policy asks for (Foreground: foregroundDeletion, Orphan: orphan;
// Background removes them); an object then with finalizers is not deleted
// but marked (deletionTimestamp, deletionGracePeriodSeconds 0) until its
// last finalizer is removed. The response (200) is the last state of the
// object, or the marked object.
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
// opts: its preconditions, its propagation policy, and a dry run when the
// query or the body asks for one.
func registryDeleteOptions(req *http.Request, opts *metav1.DeleteOptions) registry.DeleteOptions {
	return registry.DeleteOptions{Preconditions: preconditions(opts), Validate: allowDeletion,
		DryRun: request.IsDryRun(req) || len(opts.DryRun) > 0, PropagationPolicy: propagationPolicy(opts)}
}

// propagationPolicy is the policy opts ask for ("" for none), the
// deprecated orphanDependents (which validation allows only without
// propagationPolicy) being Orphan when true and Background when false,
// as kube-apiserver reads it.
func propagationPolicy(opts *metav1.DeleteOptions) metav1.DeletionPropagation {
	//nolint:staticcheck // SA1019: the deprecated field is still part of the API
	switch orphan := opts.OrphanDependents; {
	case opts.PropagationPolicy != nil:
		return *opts.PropagationPolicy
	case orphan != nil && *orphan:
		return metav1.DeletePropagationOrphan
	case orphan != nil:
		return metav1.DeletePropagationBackground
	}
	return ""
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
	dryRun := request.IsDryRun(req) || len(opts.DryRun) > 0
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

// serveDeleteCollection answers DELETE on a collection (Kubernetes'
// deletecollection, what kubectl delete --all sends): every object the
// request's labelSelector and fieldSelector match (in the namespace, or
// in all namespaces) is deleted with the request's DeleteOptions, and the
// answer is 200 with the list of the deleted objects' last states (an
// object left with finalizers, its own or the one the propagationPolicy
// adds, is marked, as a single delete marks it, and listed as marked).
// Objects deleted meanwhile by someone else are skipped; the first other
// failure ends the request with its error. dryRun deletes nothing and
// lists what would go. ignoreStoreReadErrorWithClusterBreakingPotential is
// refused (422), as Kubernetes refuses it here.
func (s *Server) serveDeleteCollection(w http.ResponseWriter, req *http.Request, t target) {
	p, err := request.ParseList(req.URL.Query(), t.res.fields, t.res.GetAttrs)
	if err == nil && p.Watch {
		err = badRequest("watch is not allowed with deletecollection")
	}
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	opts, err := s.deleteOptions(w, req)
	if err == nil && utilptr.Deref(opts.IgnoreStoreReadErrorWithClusterBreakingPotential, false) {
		err = apierrors.NewInvalid(k8sschema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "",
			field.ErrorList{field.Invalid(field.NewPath("ignoreStoreReadErrorWithClusterBreakingPotential"), true,
				"is not allowed with DELETECOLLECTION, try again after removing the option")})
	}
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	lopts := p.Options
	lopts.Predicate.Limit, lopts.Predicate.Continue = 0, "" // everything that matches goes
	list := &unstructured.UnstructuredList{}
	if err := t.res.Storage.GetList(req.Context(), t.collectionKey(), lopts, list); err != nil {
		s.writeError(w, req, err)
		return
	}
	ropts := registryDeleteOptions(req, opts)
	deleted := list.Items[:0]
	for _, item := range list.Items {
		it := target{res: t.res, namespace: item.GetNamespace(), name: item.GetName()}
		out := &unstructured.Unstructured{}
		_, err := t.res.registry.Delete(req.Context(), it.objectKey(), out, ropts)
		switch {
		case storage.IsCode(err, storage.CodeNotFound):
			continue
		case err != nil:
			s.writeError(w, req, t.res.objectError(err, it.name))
			return
		}
		deleted = append(deleted, *out)
	}
	list.Items = deleted
	s.writeList(w, req, t.res, list)
}
