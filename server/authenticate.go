package server

import (
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/filters"
	"github.com/listwatch/listwatch/server/request"
)

// authenticate identifies req's user with Config.Authenticator; a request
// with wrong credentials is 401, and so is one without any unless
// AllowAnonymous, as Kubernetes answers.
func (s *Server) authenticate(req *http.Request) (*http.Request, error) {
	if s.cfg.Authenticator == nil {
		if info := filters.RequestInfoFrom(req.Context()); info != nil {
			info.User = auth.AnonymousUser
		}
		return req, nil
	}
	u, ok, err := s.cfg.Authenticator.Authenticate(req)
	switch {
	case err != nil:
		s.log.Debug("authentication failed", "path", req.URL.Path, "err", err)
		return req, apierrors.NewUnauthorized("Unauthorized")
	case !ok && s.cfg.AllowAnonymous:
		u = auth.Anonymous()
	case !ok:
		return req, apierrors.NewUnauthorized("Unauthorized")
	}
	if info := filters.RequestInfoFrom(req.Context()); info != nil {
		info.User = u.Name
	}
	return req.WithContext(auth.WithUser(req.Context(), u)), nil
}

// checkCredentials fails (401) a request whose credentials the
// Authenticator refuses; a request without any passes. /livez, /readyz and
// /healthz are open to anyone, but not to wrong credentials, as
// kube-apiserver answers them.
func (s *Server) checkCredentials(req *http.Request) error {
	if s.cfg.Authenticator == nil {
		return nil
	}
	if _, _, err := s.cfg.Authenticator.Authenticate(req); err != nil {
		s.log.Debug("authentication failed", "path", req.URL.Path, "err", err)
		return apierrors.NewUnauthorized("Unauthorized")
	}
	return nil
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
	a := auth.Attributes{User: auth.UserFrom(req.Context()), Verb: verb, ResourceRequest: true,
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
	return apierrors.NewForbidden(k8sschema.GroupResource{Group: t.res.Group, Resource: t.res.Plural}, t.name, fmt.Errorf("%s", msg))
}

// authorizeNonResource asks Config.Authorizer whether a request on a path
// that is not a resource may be served.
func (s *Server) authorizeNonResource(req *http.Request) error {
	if s.cfg.Authorizer == nil {
		return nil
	}
	a := auth.Attributes{User: auth.UserFrom(req.Context()), Verb: strings.ToLower(req.Method), Path: req.URL.Path}
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
	return apierrors.NewForbidden(k8sschema.GroupResource{}, "", fmt.Errorf("%s", msg))
}

// kubeVerb is Kubernetes' verb for a resource request.
func kubeVerb(req *http.Request, t target) string {
	switch req.Method {
	case http.MethodGet, http.MethodHead:
		switch {
		case request.IsWatch(req):
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
