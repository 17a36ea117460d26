// Package layering checks that the library's packages depend only downward
// and never on modules the library must not pull in.
package layering

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/listwatch/listwatch"

type pkg struct {
	ImportPath string
	Deps       []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// rules: for a package path prefix (relative to the module), dependency
// prefixes it must not have (module-relative when they start with "./").
// The example fixture (examples/widget) is forbidden to library code by
// TestExampleOnlyDependencies.
var rules = []struct {
	pkg       string
	forbidden []string
}{
	{"", []string{"k8s.io/apiserver", "k8s.io/client-go", "sigs.k8s.io/controller-runtime"}},
	{"storage", []string{"./registry", "./cacher", "./reflector", "./watchcache", "./server", "./embedtest", "./etcdrun", "./cmd", "./bench", "go.etcd.io/etcd/server"}},
	{"watchcache", []string{"go.etcd.io/etcd", "./registry", "./cacher", "./reflector", "./server", "./embedtest", "./storage/etcd3"}},
	{"cacher", []string{"go.etcd.io/etcd", "./registry", "./reflector", "./server", "./embedtest", "./cmd", "./storage/etcd3"}},
	{"reflector", []string{"go.etcd.io/etcd", "./cacher", "./watchcache", "./storage/etcd3", "./server", "./embedtest", "./cmd"}},
	// The server reaches cached encodings through storage's declared
	// capabilities (storage.EncodedLister, storage.EncodedWatcher), never
	// through the watch cache.
	{"server", []string{"./watchcache", "./reflector", "./embedtest", "./etcdrun", "./cmd", "./storage/etcd3", "go.etcd.io/etcd/server"}},
	// The server's rooms, bottom up: wire (bytes) < schema (what a
	// resource's schema means) < request (decoding) < filters (what wraps
	// every request); auth stands alone. Package server, above them all,
	// is checked by TestServerSubpackages.
	{"server/wire", []string{"./server/schema", "./server/request", "./server/filters", "./server/auth"}},
	{"server/schema", []string{"./server/request", "./server/filters", "./server/auth"}},
	{"server/request", []string{"./server/filters", "./server/auth"}},
	{"server/auth", []string{"./server/wire", "./server/request", "./server/schema", "./server/filters"}},
	{"embedtest", []string{"./cacher", "./reflector", "./server", "./watchcache", "./cmd"}},
	// registry is the write path over any storage.Interface: it knows
	// storage and apimachinery, nothing above or beside them.
	{"registry", []string{"go.etcd.io/etcd", "./cacher", "./reflector", "./watchcache", "./server", "./embedtest",
		"./etcdrun", "./cmd", "./storage/etcd3", "./manager", "./bench"}},
	// transport is the HTTP clients' rate limit and 429 retry, under both
	// client and reflector/httplw: net/http and x/time/rate, nothing of
	// this module.
	{"transport", []string{"./storage", "./registry", "./cacher", "./reflector", "./watchcache", "./server",
		"./client", "./cache", "./manager", "./builder", "./embedtest", "./etcdrun", "./cmd", "./bench", "go.etcd.io/etcd"}},
	// client reads and writes objects over registry and storage (in
	// process) or HTTP: it knows no etcd, no cacher and nothing above it.
	{"client", []string{"go.etcd.io/etcd", "./cacher", "./watchcache", "./server", "./embedtest", "./etcdrun",
		"./cmd", "./storage/etcd3", "./cache", "./gc", "./manager", "./builder", "./bench"}},
	// cache is informers over any ListerWatcher, read through client's
	// interfaces.
	{"cache", []string{"go.etcd.io/etcd", "./cacher", "./watchcache", "./server", "./embedtest", "./etcdrun",
		"./cmd", "./storage/etcd3", "./gc", "./manager", "./builder", "./bench"}},
	// gc is the garbage collector over a client and a cache's informers:
	// below the manager (which runs it), blind to where objects are stored.
	{"gc", []string{"go.etcd.io/etcd", "./cacher", "./watchcache", "./server", "./embedtest",
		"./etcdrun", "./cmd", "./manager", "./builder", "./bench"}},
	// manager assembles storage, caches and controllers; builder sits on
	// it. Neither knows the HTTP server or the test servers.
	{"manager", []string{"./server", "./embedtest", "./cmd", "./builder", "./bench", "go.etcd.io/etcd/server"}},
	{"builder", []string{"./server", "./embedtest", "./cmd", "./bench", "go.etcd.io/etcd/server"}},
}

// exampleOnly are dependencies only the examples (below examples/) may
// have: Kubernetes' own API types, and the examples themselves. The library
// stays free of k8s.io/api; an example that wants Node and Pod brings it.
var exampleOnly = []string{"k8s.io/api", "./examples"}

// fixture is the example type that packages of test helpers (storagetest,
// ...), the demo (cmd/) and the benchmarks (bench/) build their objects
// with; library code never depends on it.
const fixture = "./examples/widget"

// fixtureUser reports whether the package rel may depend on fixture.
func fixtureUser(rel string) bool {
	return testHelper(rel) || strings.HasPrefix(rel, "cmd/") || rel == "bench" || strings.HasPrefix(rel, "bench/")
}

// TestExampleOnlyDependencies: no package outside examples/ depends on
// k8s.io/api or on an example, except the fixture's users on the fixture.
func TestExampleOnlyDependencies(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "examples" || strings.HasPrefix(rel, "examples/") {
			continue
		}
		for _, dep := range p.Deps {
			if fixtureUser(rel) && dep == module+"/"+fixture[2:] {
				continue
			}
			for _, f := range exampleOnly {
				target := f
				if strings.HasPrefix(f, "./") {
					target = module + "/" + f[2:]
				}
				if dep == target || strings.HasPrefix(dep, target+"/") {
					t.Errorf("%s depends on %s (only examples/ may)", p.ImportPath, dep)
				}
			}
		}
	}
}

// testHelper reports whether rel is a package of test helpers.
func testHelper(rel string) bool {
	last := rel[strings.LastIndex(rel, "/")+1:]
	return strings.HasSuffix(last, "test")
}

func TestLayering(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(rel, "internal/layering") {
			continue
		}
		for _, r := range rules {
			if r.pkg != "" && rel != r.pkg && !strings.HasPrefix(rel, r.pkg+"/") {
				continue
			}
			for _, dep := range p.Deps {
				for _, f := range r.forbidden {
					target := f
					if strings.HasPrefix(f, "./") {
						target = module + "/" + f[2:]
					}
					if dep == target || strings.HasPrefix(dep, target+"/") {
						t.Errorf("%s depends on %s (forbidden for %q)", p.ImportPath, dep, r.pkg)
					}
				}
			}
		}
	}
}

// TestServerSubpackages: the rooms of the server (server/auth, ...) are
// below it: package server may import them, none of them may import
// package server.
func TestServerSubpackages(t *testing.T) {
	srv := module + "/server"
	subs := 0
	for _, p := range listPackages(t) {
		if !strings.HasPrefix(p.ImportPath, srv+"/") {
			continue
		}
		subs++
		if slices.Contains(p.Deps, srv) {
			t.Errorf("%s depends on %s (the server's subpackages are below it)", p.ImportPath, srv)
		}
	}
	if subs == 0 {
		t.Errorf("no packages under %s", srv)
	}
}

// TestConformanceSuiteIsPublic: storage/storagetest, the conformance suite
// an implementation of storage.Interface outside this module runs (as
// storagetest's own external tests run it against etcd3, through exported
// API only), depends on no internal package of this module: only on the
// storage contract and the example fixture.
func TestConformanceSuiteIsPublic(t *testing.T) {
	suite := module + "/storage/storagetest"
	allowed := []string{suite, module + "/storage", module + "/examples/widget"}
	found := false
	for _, p := range listPackages(t) {
		if p.ImportPath != suite {
			continue
		}
		found = true
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, module+"/") && !slices.Contains(allowed, dep) {
				t.Errorf("%s depends on %s; a store outside this module could not run it if that were internal, "+
					"and should not need more than %v", suite, dep, allowed[1:])
			}
		}
	}
	if !found {
		t.Fatalf("%s not found", suite)
	}
}
