package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/filters"
	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/wire"
)

// authenticate identifies req's user with Config.Authenticator; a request
// with wrong credentials is 401, and so is one without any unless
// AllowAnonymous, as Kubernetes answers. info learns the user's name.
func (s *Server) authenticate(req *http.Request, info *filters.RequestInfo) (*http.Request, error) {
	if s.cfg.Authenticator == nil {
		info.User = auth.AnonymousUser
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
	info.User = u.Name
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

// selfSubjectAccessReview is authorization.k8s.io/v1 SelfSubjectAccessReview,
// what kubectl auth can-i asks: may the requesting user do what spec says?
type selfSubjectAccessReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
		NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	} `json:"spec"`
	Status struct {
		Allowed         bool   `json:"allowed"`
		Denied          bool   `json:"denied,omitempty"`
		Reason          string `json:"reason,omitempty"`
		EvaluationError string `json:"evaluationError,omitempty"`
	} `json:"status"`
}

// resourceAttributes are what a SelfSubjectAccessReview asks about a
// resource.
type resourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb,omitempty"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

// nonResourceAttributes are what a SelfSubjectAccessReview asks about
// another path.
type nonResourceAttributes struct {
	Path string `json:"path,omitempty"`
	Verb string `json:"verb,omitempty"`
}

// selfSubjectReview is authentication.k8s.io/v1 SelfSubjectReview, what
// kubectl auth whoami asks: who is the requesting user?
type selfSubjectReview struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Status            struct {
		UserInfo struct {
			Username string   `json:"username,omitempty"`
			UID      string   `json:"uid,omitempty"`
			Groups   []string `json:"groups,omitempty"`
		} `json:"userInfo"`
	} `json:"status"`
}

// selfReviewPath names the review a path creates ("" for none):
// authorization.k8s.io/v1 selfsubjectaccessreviews or
// authentication.k8s.io/v1 selfsubjectreviews.
func selfReviewPath(parts []string) string {
	if len(parts) != 4 || parts[0] != "apis" || parts[2] != "v1" {
		return ""
	}
	switch g, r := parts[1], parts[3]; {
	case g == "authorization.k8s.io" && r == "selfsubjectaccessreviews":
		return "SelfSubjectAccessReview"
	case g == "authentication.k8s.io" && r == "selfsubjectreviews":
		return "SelfSubjectReview"
	}
	return ""
}

// serveSelfReview answers a POST creating a SelfSubjectAccessReview (may
// the requesting user do this? the Authorizer's answer, everything
// without one) or a SelfSubjectReview (the requesting user), as
// kube-apiserver does for every authenticated user. Nothing is stored.
func (s *Server) serveSelfReview(w http.ResponseWriter, req *http.Request, kind string) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		s.writeError(w, req, methodNotAllowed(req.Method, strings.ToLower(kind)+"s"))
		return
	}
	wr, err := request.ReadWrite(w, req, request.ReviewWrite, s.cfg.MaxRequestBodyBytes)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	u := auth.UserFrom(req.Context())
	if kind == "SelfSubjectReview" {
		var r selfSubjectReview
		r.TypeMeta = metav1.TypeMeta{APIVersion: "authentication.k8s.io/v1", Kind: kind}
		r.CreationTimestamp = metav1.Now()
		r.Status.UserInfo.Username, r.Status.UserInfo.UID, r.Status.UserInfo.Groups = u.Name, u.UID, u.Groups
		writeJSON(w, http.StatusCreated, &r)
		return
	}
	r, err := decodeAccessReview(wr)
	if err != nil {
		s.writeError(w, req, badRequest(fmt.Sprintf("SelfSubjectAccessReview in version \"v1\" cannot be handled as a SelfSubjectAccessReview: %v", err)))
		return
	}
	ra, nra := r.Spec.ResourceAttributes, r.Spec.NonResourceAttributes
	if (ra == nil) == (nra == nil) {
		s.writeError(w, req, apierrors.NewInvalid(k8sschema.GroupKind{Group: "authorization.k8s.io", Kind: kind}, "",
			field.ErrorList{field.Invalid(field.NewPath("spec"), "", "exactly one of nonResourceAttributes or resourceAttributes must be specified")}))
		return
	}
	a := auth.Attributes{User: u}
	if ra != nil {
		a.ResourceRequest, a.Verb, a.APIGroup, a.APIVersion, a.Resource, a.Subresource, a.Namespace, a.Name =
			true, ra.Verb, ra.Group, ra.Version, ra.Resource, ra.Subresource, ra.Namespace, ra.Name
	} else {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	r.TypeMeta = metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: kind}
	r.CreationTimestamp = metav1.Now()
	if s.cfg.Authorizer == nil {
		r.Status.Allowed, r.Status.Reason = true, "no authorizer: every request is allowed"
	} else {
		ok, reason, err := s.cfg.Authorizer.Authorize(req.Context(), a)
		r.Status.Allowed, r.Status.Denied, r.Status.Reason = ok, !ok, reason
		if err != nil {
			r.Status.Denied = false
			r.Status.EvaluationError = err.Error()
			s.log.Warn("authorizing a SelfSubjectAccessReview", "user", u.Name, "err", err)
		}
	}
	writeJSON(w, http.StatusCreated, &r)
}

// decodeAccessReview decodes a SelfSubjectAccessReview's spec from JSON or
// from Kubernetes' protobuf (spec is field 2; resourceAttributes 1:
// namespace 1, verb 2, group 3, version 4, resource 5, subresource 6, name
// 7; nonResourceAttributes 2: path 1, verb 2).
func decodeAccessReview(wr *request.Write) (*selfSubjectAccessReview, error) {
	r := &selfSubjectAccessReview{}
	if wr.MediaType != wire.MediaProtobuf {
		return r, json.Unmarshal(wr.Body, r)
	}
	raw, err := wire.UnwrapProtobuf(wr.Body)
	if err != nil {
		return nil, err
	}
	msg, err := wire.ProtobufFields(raw)
	if err != nil {
		return nil, err
	}
	spec, err := wire.ProtobufFields(msg[2])
	if err != nil {
		return nil, err
	}
	if b, ok := spec[1]; ok {
		f, err := wire.ProtobufFields(b)
		if err != nil {
			return nil, err
		}
		r.Spec.ResourceAttributes = &resourceAttributes{Namespace: string(f[1]), Verb: string(f[2]), Group: string(f[3]),
			Version: string(f[4]), Resource: string(f[5]), Subresource: string(f[6]), Name: string(f[7])}
	}
	if b, ok := spec[2]; ok {
		f, err := wire.ProtobufFields(b)
		if err != nil {
			return nil, err
		}
		r.Spec.NonResourceAttributes = &nonResourceAttributes{Path: string(f[1]), Verb: string(f[2])}
	}
	return r, nil
}
