package server

import (
	"runtime/debug"
	"strconv"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

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
