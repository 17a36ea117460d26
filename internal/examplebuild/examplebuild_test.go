package examplebuild

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const modulePath = "github.com/listwatch/listwatch"

// TestExamplesBuildInAFreshModule copies each file with godoc examples
// (func Example...) into its own package of a new module that requires
// this module through a replace directive, and builds them all (compiled,
// not linked: linking ten binaries with etcd in them takes half a minute).
// It runs offline: GOPROXY=off, with the module cache the repository's own
// build uses.
func TestExamplesBuildInAFreshModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command in PATH (%v): cannot build the copies", err)
	}
	root := moduleRoot(t)
	files := exampleFiles(t, root)
	if len(files) < 8 {
		t.Fatalf("found %d example files, want at least 8 (storage/etcd3, watchcache, cacher, reflector, server, ...): %v", len(files), files)
	}

	dir := t.TempDir()
	writeGoMod(t, root, dir)
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			t.Fatal(err)
		}
		pkgDir := filepath.Join(dir, strings.ReplaceAll(strings.TrimSuffix(rel, ".go"), string(filepath.Separator), "_"))
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			t.Fatal(err)
		}
		src := asPackage(t, f)
		if err := os.WriteFile(filepath.Join(pkgDir, "example.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("module lookup disabled by GOPROXY=off")) {
			t.Skipf("a dependency is missing from the module cache and GOPROXY=off forbids fetching it; run `go mod download` in the repository first:\n%s", out)
		}
		t.Fatalf("examples copied to a fresh module do not build (%v):\n%s", err, out)
	}
	t.Logf("built %d example files in a fresh module in %v", len(files), time.Since(start).Round(time.Millisecond))
}

// moduleRoot returns the directory of this module's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the test's directory", modulePath)
		}
		dir = parent
	}
}

// exampleFiles returns the _test.go files of the module (not of nested
// modules, not under internal/ or testdata/) that declare a func Example.
func exampleFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "internal") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte("\nfunc Example")) {
			out = append(out, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeGoMod writes dir/go.mod: a new module with this module's
// requirements, this module itself replaced by root, and go.sum copied.
func writeGoMod(t *testing.T, root, dir string) {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(mod), "module "+modulePath+"\n", "module example.com/copied\n", 1)
	body += fmt.Sprintf("\nrequire %s v0.0.0-00010101000000-000000000000\n\nreplace %s => %s\n", modulePath, modulePath, strconv.Quote(root))
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
}

// asPackage returns the source of file as a plain (non-test) package
// named example. It fails the test if the file imports an internal
// package of this module (a copy could not) or has no examples.
func asPackage(t *testing.T, file string) []byte {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if strings.HasPrefix(p, modulePath+"/") && strings.Contains(p+"/", "/internal/") {
			t.Errorf("%s imports %s: a copy outside the module cannot", file, p)
		}
	}
	f.Name = ast.NewIdent("example")
	examples := 0
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
			examples++
		}
	}
	if examples == 0 {
		t.Fatalf("%s: no examples", file)
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
