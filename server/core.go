package server

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The legacy core group ("", served at /api/{version} rather than
// /apis/{group}/{version}) is registered like any other: a Resource with an
// empty Group. Its versions are listed at /api and its resources at
// /api/{version}; it is not listed at /apis.

// pathPrefix is the URL path below which a group version's resources live:
// /api/{version} for the core group, /apis/{group}/{version} otherwise.
func pathPrefix(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

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
