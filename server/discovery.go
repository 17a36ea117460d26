package server

import (
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"

	"github.com/listwatch/listwatch/server/schema"
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
		return nil, apierrors.NewNotFound(k8sschema.GroupResource{}, g)
	}
	ag := s.apiGroup(g)
	return &ag, nil
}

func (s *Server) resourceList(g, v string) (any, error) {
	gv := k8sschema.GroupVersion{Group: g, Version: v}
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
		return nil, apierrors.NewNotFound(k8sschema.GroupResource{}, gv.String())
	}
	return l, nil
}

// The legacy core group ("", served at /api/{version} rather than
// /apis/{group}/{version}) is registered like any other: a Resource with an
// empty Group. Its versions are listed at /api and its resources at
// /api/{version}; it is not listed at /apis.

// coreVersions lists the versions of the core group, in registration order.
func (s *Server) coreVersions() *metav1.APIVersions {
	v := &metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{}}
	for _, r := range s.cfg.Resources {
		if r.Group == "" && !contains(v.Versions, r.Version) {
			v.Versions = append(v.Versions, r.Version)
		}
	}
	return v
}

// isResourcePath reports whether parts (a split URL path) name a resource
// or object rather than a discovery document.
func isResourcePath(parts []string) bool {
	return (len(parts) >= 4 && parts[0] == "apis") || (len(parts) >= 3 && parts[0] == "api")
}

// devVersion is the version reported by a build of a commit that carries
// no release tag.
const devVersion = "v0.1.0-dev"

// moduleVersion is the version /version reports when Config.GitVersion is
// not set: the main module's version from the build info when it is a
// release (a tag), otherwise devVersion with the commit the binary was
// built from as build metadata (v0.1.0-dev+1a2b3c4d5e6f, ".dirty" added
// for a modified tree), never a v0.0.0 pseudo-version.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return devVersion
	}
	return versionFrom(bi)
}

// versionFrom is moduleVersion over given build info.
func versionFrom(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if sv, err := utilversion.ParseSemantic(v); err == nil && strings.HasPrefix(v, "v") &&
		!strings.HasPrefix(v, "v0.0.0-") && sv.BuildMetadata() == "" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ".dirty"
			}
		}
	}
	if rev == "" {
		return devVersion
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return devVersion + "+" + rev + dirty
}

// majorMinor are the major and minor numbers of a semantic version, as
// /version reports them ("" when it is not one).
func majorMinor(v string) (string, string) {
	sv, err := utilversion.ParseSemantic(v)
	if err != nil {
		return "", ""
	}
	return strconv.FormatUint(uint64(sv.Major()), 10), strconv.FormatUint(uint64(sv.Minor()), 10)
}

// rootPaths lists the paths the server serves, as kube-apiserver answers
// GET /.
func (s *Server) rootPaths() *metav1.RootPaths {
	paths := []string{"/api", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"}
	if s.metrics != nil {
		paths = append(paths, "/metrics")
	}
	for _, r := range s.cfg.Resources {
		paths = append(paths, schema.PathPrefix(r.Group, r.Version))
		if r.Group != "" {
			paths = append(paths, "/apis/"+r.Group)
		}
	}
	slices.Sort(paths)
	return &metav1.RootPaths{Paths: slices.Compact(paths)}
}
