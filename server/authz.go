package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Attributes describe a request to an Authorizer.
type Attributes struct {
	// User is who asks.
	User *User
	// Verb is Kubernetes' verb: get, list, watch, create, update, patch,
	// delete or deletecollection for resources (and
	// unsafe-delete-ignore-read-errors, asked besides delete for the
	// unsafe delete of a corrupt object); the lower-case HTTP method (get,
	// post, ...) for other paths.
	Verb string
	// ResourceRequest is true for requests on a resource
	// (/apis/{group}/{version}/...), false for other paths (discovery,
	// /openapi, /version, /metrics).
	ResourceRequest bool
	// APIGroup, APIVersion, Resource, Namespace and Name name the object
	// or collection of a resource request ("" Namespace: cluster-scoped
	// or all namespaces; "" Name: the collection).
	APIGroup, APIVersion, Resource, Namespace, Name string
	// Path is the URL path of a request on another path.
	Path string
	// Subresource is "status" or "scale" for a request on an object's
	// subresource, "" otherwise.
	Subresource string
}

// Authorizer decides whether a request may be served.
type Authorizer interface {
	// Authorize reports whether a is allowed, and why not when it is not
	// (the reason is added to the 403 message). An error is a 500.
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (bool, string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	return f(ctx, a)
}

// readVerbs are the verbs that change nothing.
var readVerbs = []string{"get", "list", "watch"}

// ReadAllWriteGroups is an example policy: every authenticated user may
// read everything (resources, discovery, OpenAPI, metrics), and only
// members of groups may create, update, patch or delete.
func ReadAllWriteGroups(groups ...string) Authorizer {
	return AuthorizerFunc(func(_ context.Context, a Attributes) (bool, string, error) {
		if a.User == nil || !contains(a.User.Groups, AuthenticatedG) {
			return false, "", nil
		}
		if !a.ResourceRequest || slices.Contains(readVerbs, a.Verb) {
			return true, "", nil
		}
		for _, g := range groups {
			if contains(a.User.Groups, g) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("only members of %s may write", strings.Join(groups, ", ")), nil
	})
}

// authorizeResource asks Config.Authorizer whether t may be served (403
// Forbidden worded as Kubernetes words it when not). Without an
// authorizer everything is allowed.
func (s *Server) authorizeResource(req *http.Request, t target) error {
	return s.authorizeVerb(req, t, strings.ToLower(kubeVerb(req, t)))
}

// authorizeVerb asks Config.Authorizer whether verb may be done on t.
func (s *Server) authorizeVerb(req *http.Request, t target, verb string) error {
	if s.cfg.Authorizer == nil {
		return nil
	}
	a := Attributes{User: UserFrom(req.Context()), Verb: verb, ResourceRequest: true,
		APIGroup: t.res.Group, APIVersion: t.res.Version, Resource: t.res.Plural, Namespace: t.namespace, Name: t.name,
		Subresource: t.subresource}
	ok, reason, err := s.cfg.Authorizer.Authorize(req.Context(), a)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("authorization: %w", err))
	}
	if ok {
		return nil
	}
	scope := "at the cluster scope"
	if t.namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", t.namespace)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	msg := fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", a.User.Name, a.Verb, res, a.APIGroup, scope)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{Group: t.res.Group, Resource: t.res.Plural}, t.name, fmt.Errorf("%s", msg))
}

// authorizeNonResource asks Config.Authorizer whether a request on a path
// that is not a resource may be served.
func (s *Server) authorizeNonResource(req *http.Request) error {
	if s.cfg.Authorizer == nil {
		return nil
	}
	a := Attributes{User: UserFrom(req.Context()), Verb: strings.ToLower(req.Method), Path: req.URL.Path}
	ok, reason, err := s.cfg.Authorizer.Authorize(req.Context(), a)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("authorization: %w", err))
	}
	if ok {
		return nil
	}
	msg := fmt.Sprintf("User %q cannot %s path %q", a.User.Name, a.Verb, a.Path)
	if reason != "" {
		msg += ": " + reason
	}
	return apierrors.NewForbidden(schema.GroupResource{}, "", fmt.Errorf("%s", msg))
}

// kubeVerb is Kubernetes' verb for a resource request.
func kubeVerb(req *http.Request, t target) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case isWatch(req):
			return "watch"
		case t.name == "":
			return "list"
		}
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if t.name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(req.Method)
}
