package server

import (
	"net/http"
	"runtime"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
)

// verbs are the verbs every resource supports.
var verbs = metav1.Verbs{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// serveDiscovery answers a GET with the document doc builds.
func (s *Server) serveDiscovery(w http.ResponseWriter, req *http.Request, doc func() (any, error)) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.writeError(w, req, methodNotAllowed(req.Method, "discovery"))
		return
	}
	v, err := doc()
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// serveAPIs serves /apis, /apis/{group} and /apis/{group}/{version}.
func (s *Server) serveAPIs(w http.ResponseWriter, req *http.Request, parts []string) {
	switch len(parts) {
	case 0:
		s.serveDiscovery(w, req, func() (any, error) { return s.groupList(), nil })
	case 1:
		s.serveDiscovery(w, req, func() (any, error) { return s.group(parts[0]) })
	default:
		s.serveDiscovery(w, req, func() (any, error) { return s.resourceList(parts[0], parts[1]) })
	}
}

func (s *Server) versionInfo() (any, error) {
	major, minor := majorMinor(s.cfg.GitVersion)
	return &version.Info{
		Major: major, Minor: minor, GitVersion: s.cfg.GitVersion,
		GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}, nil
}

func (s *Server) groupList() *metav1.APIGroupList {
	l := &metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"},
		Groups: []metav1.APIGroup{}}
	for _, g := range s.groups {
		l.Groups = append(l.Groups, s.apiGroup(g))
	}
	return l
}

// apiGroup describes group g; its preferred version is the first one
// registered.
func (s *Server) apiGroup(g string) metav1.APIGroup {
	ag := metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}, Name: g}
	for _, r := range s.cfg.Resources {
		if r.Group != g || containsVersion(ag.Versions, r.Version) {
			continue
		}
		ag.Versions = append(ag.Versions, metav1.GroupVersionForDiscovery{
			GroupVersion: r.GroupVersion().String(), Version: r.Version})
	}
	if len(ag.Versions) > 0 {
		ag.PreferredVersion = ag.Versions[0]
	}
	return ag
}

func containsVersion(vs []metav1.GroupVersionForDiscovery, v string) bool {
	for _, x := range vs {
		if x.Version == v {
			return true
		}
	}
	return false
}

func (s *Server) group(g string) (any, error) {
	if !contains(s.groups, g) {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, g)
	}
	ag := s.apiGroup(g)
	return &ag, nil
}

func (s *Server) resourceList(g, v string) (any, error) {
	gv := schema.GroupVersion{Group: g, Version: v}
	l := &metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(), APIResources: []metav1.APIResource{}}
	for _, r := range s.cfg.Resources {
		if r.Group != g || r.Version != v {
			continue
		}
		rr := s.resources[g+"/"+v+"/"+r.Plural]
		l.APIResources = append(l.APIResources, metav1.APIResource{
			Name: r.Plural, SingularName: rr.Singular, Namespaced: r.Namespaced, Kind: r.Kind, Verbs: verbs,
			ShortNames: r.ShortNames,
		})
		l.APIResources = append(l.APIResources, rr.subresourceDiscovery()...)
	}
	if len(l.APIResources) == 0 {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, gv.String())
	}
	return l, nil
}
