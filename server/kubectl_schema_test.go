package server

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/widget"
)

// withWidgetSchema gives the fixture's widgets widget.Schema and
// the printer columns cacher-demo gives them.
func withWidgetSchema(cfg *Config) {
	cfg.Resources[0].Schema = widget.Schema()
	cfg.Resources[0].PrinterColumns = []PrinterColumn{
		{Name: "Size", Type: "integer", JSONPath: ".spec.replicas", Description: "Replicas wanted."},
		{Name: "Node", Type: "string", JSONPath: ".spec.nodeName", Priority: 1},
	}
}

// kubectlRunner runs the kubectl binary against f's server, with an empty
// kubeconfig and a private cache directory.
type kubectlRunner struct {
	t     *testing.T
	bin   string
	f     *fixture
	cache string
}

func newKubectl(t *testing.T, f *fixture) *kubectlRunner {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: the end-to-end steps need the real binary")
	}
	cache := t.TempDir()
	require.NoError(t, os.WriteFile(cache+"/none", []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	return &kubectlRunner{t: t, bin: bin, f: f, cache: cache}
}

func (k *kubectlRunner) run(stdin string, args ...string) (string, error) {
	k.t.Helper()
	cmd := exec.CommandContext(testCtx(k.t), k.bin, append([]string{"--server", k.f.ts.URL, "--cache-dir", k.cache,
		"--kubeconfig", k.cache + "/none"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// start runs kubectl in the background until the test ends and returns
// its output lines.
func (k *kubectlRunner) start(args ...string) <-chan string {
	k.t.Helper()
	ctx, cancel := context.WithCancel(testCtx(k.t))
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--server", k.f.ts.URL, "--cache-dir", k.cache,
		"--kubeconfig", k.cache + "/none"}, args...)...)
	out, err := cmd.StdoutPipe()
	require.NoError(k.t, err)
	require.NoError(k.t, cmd.Start())
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	k.t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return lines
}

// nextLine returns the next line of a started kubectl, failing after 20 s.
func (k *kubectlRunner) nextLine(lines <-chan string) string {
	k.t.Helper()
	select {
	case l, ok := <-lines:
		require.True(k.t, ok, "kubectl ended")
		return l
	case <-time.After(20 * time.Second):
		k.t.Fatal("no kubectl output within 20s")
	}
	return ""
}

func (k *kubectlRunner) must(stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.run(stdin, args...)
	require.NoError(k.t, err, out)
	return out
}

// TestKubectlSchema drives kubectl's schema-dependent commands with their
// defaults. With TestKubectlServerSideApply it covers the done-when steps
// 1-6 of issue #13: (1) apply -f with default validation, (2) explain
// widgets and widgets.spec, (6) an invalid object refused with 422 and the
// field path, (5) get widgets with a SIZE column (also watched);
// TestKubectlServerSideApply: (3) apply --server-side leaving
// managedFields and (4) a conflicting apply refused without
// --force-conflicts.
func TestKubectlSchema(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	k := newKubectl(t, f)
	manifest := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  nodeName: n1\n  replicas: 2\n"
	require.Equal(t, "widget.demo.listwatch.dev/w1 created", k.must(manifest, "apply", "-f", "-"))
	out := k.must("", "explain", "widgets")
	t.Log(out)
	require.Contains(t, out, "KIND:       Widget")
	require.Contains(t, out, "spec\t<Object>")
	out = k.must("", "explain", "widgets.spec")
	t.Log(out)
	require.Contains(t, out, "replicas\t<integer>")
	require.Contains(t, out, "Replicas is how many copies")

	// An invalid object (wrong type in spec) is refused by the server with
	// 422 and the field path.
	invalid := strings.Replace(manifest, "replicas: 2", `replicas: "two"`, 1)
	out, err := k.run(invalid, "apply", "-f", "-")
	require.Error(t, err, out)
	require.Contains(t, out, `is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer`)
	require.Equal(t, "2", k.must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))

	// kubectl get prints the printer columns; -o wide adds priority 1.
	out = k.must("", "get", "widgets", "-n", "default")
	require.Regexp(t, `^NAME\s+SIZE\s+AGE\nw1\s+2\s+\S+$`, out)
	out = k.must("", "get", "widgets", "-A", "-o", "wide")
	require.Regexp(t, `^NAMESPACE\s+NAME\s+SIZE\s+NODE\s+AGE\ndefault\s+w1\s+2\s+n1\s+\S+$`, out)

	// kubectl get -w watches as Table: a change shows in the same columns.
	lines := k.start("get", "widgets", "-n", "default", "-w")
	require.Regexp(t, `^NAME\s+SIZE\s+AGE$`, k.nextLine(lines))
	require.Regexp(t, `^w1\s+2\s+\S+$`, k.nextLine(lines))
	k.must("", "patch", "widget", "w1", "-n", "default", "--type=merge", "-p", `{"spec":{"replicas":8}}`)
	require.Regexp(t, `^w1\s+8\s+\S+$`, k.nextLine(lines))
}

// TestKubectlExplainOpenAPIV2: kubectl's v2 explain reads /openapi/v2 in
// protobuf, so this checks the v2 document and its protobuf form.
func TestKubectlExplainOpenAPIV2(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	k := newKubectl(t, f)
	out := k.must("", "explain", "widgets.spec", "--output=plaintext-openapiv2")
	require.Contains(t, out, "replicas\t<integer>")
	require.Contains(t, out, "Replicas is how many copies")
}

// TestKubectlServerSideApply: kubectl apply --server-side leaves
// managedFields; another manager's conflicting apply fails with the
// conflict unless --force-conflicts.
func TestKubectlServerSideApply(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	k := newKubectl(t, f)
	manifest := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: s1\n  namespace: default\nspec:\n  replicas: 1\n"
	require.Equal(t, "widget.demo.listwatch.dev/s1 serverside-applied", k.must(manifest, "apply", "--server-side", "-f", "-"))
	require.Equal(t, "kubectl Apply", k.must("", "get", "widget", "s1", "-n", "default",
		"-o", "jsonpath={.metadata.managedFields[*].manager} {.metadata.managedFields[*].operation}"))

	other := strings.Replace(manifest, "replicas: 1", "replicas: 7", 1)
	out, err := k.run(other, "apply", "--server-side", "--field-manager=other", "-f", "-")
	require.Error(t, err, out)
	require.Contains(t, out, `conflict with "kubectl"`)
	require.Contains(t, out, ".spec.replicas")
	require.Equal(t, "1", k.must("", "get", "widget", "s1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))

	k.must(other, "apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-")
	require.Equal(t, "7", k.must("", "get", "widget", "s1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))

	// Server-side dry runs: diff and --dry-run=server write nothing.
	nine := strings.Replace(manifest, "replicas: 1", "replicas: 9", 1)
	out, err = k.run(nine, "diff", "--server-side", "--force-conflicts", "-f", "-")
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, out)
	require.Equal(t, 1, exit.ExitCode(), "kubectl diff exits 1 when there are differences: %s", out)
	require.Contains(t, out, "-  replicas: 7")
	require.Contains(t, out, "+  replicas: 9")
	require.Contains(t, k.must(nine, "apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-"), "(server dry run)")
	require.Equal(t, "7", k.must("", "get", "widget", "s1", "-n", "default", "-o", "jsonpath={.spec.replicas}"))
}
