package examplebuild

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// controllerExample is the godoc example of a whole controller program:
// a Widget controller owning Parts, under leader election, on etcdrun.
const controllerExample = "builder/example_test.go"

// maxControllerLines is what the reconciler and the program's main may
// take together (issue 33), counted without blank and comment lines.
const maxControllerLines = 40

// TestControllerExampleRunsInAFreshModule copies the controller example
// into a new module (this module replaced by the repository) and runs it
// there with go test: it builds against public packages only, starts its
// etcd, elects itself, reconciles, and prints what its Output comment
// says. It also holds the reconciler and main to maxControllerLines.
func TestControllerExampleRunsInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("links and runs a test binary with etcd in it (about a minute)")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command in PATH (%v)", err)
	}
	root := moduleRoot(t)
	src, err := os.ReadFile(filepath.Join(root, controllerExample))
	if err != nil {
		t.Fatal(err)
	}
	if n := controllerLines(t, string(src)); n > maxControllerLines {
		t.Errorf("%s: the reconciler and run take %d lines, more than %d", controllerExample, n, maxControllerLines)
	} else {
		t.Logf("%s: the reconciler and run take %d lines", controllerExample, n)
	}

	dir := t.TempDir()
	writeGoMod(t, root, dir)
	copied := strings.Replace(string(src), "package builder_test\n", "package example_test\n", 1)
	files := map[string]string{
		"doc.go":          "// Package example is a copy of listwatch's controller example.\npackage example\n",
		"example_test.go": copied,
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "-run", "^Example$", "-v", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off")
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("module lookup disabled by GOPROXY=off")) {
			t.Skipf("a dependency is missing from the module cache and GOPROXY=off forbids fetching it:\n%s", out)
		}
		t.Fatalf("the controller example fails in a fresh module (%v):\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("--- PASS: Example")) {
		t.Fatalf("the example did not run:\n%s", out)
	}
	t.Logf("built and ran the controller example in a fresh module in %v", time.Since(start).Round(time.Millisecond))
}

// controllerLines counts the lines from "type reconciler" to the end of
// func run, without blank lines and comments.
func controllerLines(t *testing.T, src string) int {
	t.Helper()
	from := strings.Index(src, "\ntype reconciler ")
	runAt := strings.Index(src, "\nfunc run(")
	if from < 0 || runAt < 0 {
		t.Fatalf("%s: no type reconciler or func run", controllerExample)
	}
	end := strings.Index(src[runAt:], "\n}\n")
	if end < 0 {
		t.Fatalf("%s: func run does not end", controllerExample)
	}
	n := 0
	for _, l := range strings.Split(src[from:runAt+end+2], "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "//") {
			n++
		}
	}
	return n
}
