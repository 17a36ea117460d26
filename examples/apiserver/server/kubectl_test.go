package server_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

// kubectl runs the real kubectl against one server.
type kubectl struct {
	t          *testing.T
	bin        string
	kubeconfig string
}

func newKubectl(t *testing.T, cfg *rest.Config, ns string) *kubectl {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not installed")
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: widgets
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: %q}
contexts:
- name: widgets
  context: {cluster: widgets, user: u, namespace: %s}
current-context: widgets
`, cfg.Host, cfg.BearerToken, ns)
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return &kubectl{t: t, bin: bin, kubeconfig: path}
}

func (k *kubectl) cmd(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", filepath.Join(filepath.Dir(k.kubeconfig), "cache")}, args...)...)
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	return c
}

// run runs kubectl and returns its output, failing the test on an error.
func (k *kubectl) run(ctx context.Context, stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.cmd(ctx, stdin, args...).CombinedOutput()
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

const widgetYAML = `apiVersion: widgets.listwatch.dev/v1
kind: Widget
metadata:
  name: k1
  labels: {team: a}
spec:
  size: %d
`

// TestKubectl drives the server with the real kubectl: apply (client-side),
// get -w following the changes, server-side apply, delete.
func TestKubectl(t *testing.T) {
	ctx := testCtx(t)
	k := newKubectl(t, startServer(t, server.StorageListwatch), "kubectl")
	if out := k.run(ctx, "", "version", "-o", "json"); !strings.Contains(out, `"gitVersion": "v1.`) {
		t.Fatalf("kubectl version: %s", out)
	}

	if out := k.run(ctx, fmt.Sprintf(widgetYAML, 3), "apply", "-f", "-"); !strings.Contains(out, "created") {
		t.Fatalf("apply: %s", out)
	}
	if out := k.run(ctx, "", "get", "widgets", "-l", "team=a", "-o", "jsonpath={.items[*].spec.color}"); out != "blue" {
		t.Fatalf("get: defaulted color %q, want blue", out)
	}

	// get -w prints the size of k1 at every change.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchCmd := k.cmd(wctx, "", "get", "widget", "k1", "-w", "-o", `jsonpath={.spec.size}{"\n"}`)
	stdout, err := watchCmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watchCmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stopWatch(); _ = watchCmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	next := func() string {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("kubectl get -w ended: %v", lines.Err())
		}
		return strings.TrimSpace(lines.Text())
	}
	if got := next(); got != "3" {
		t.Fatalf("get -w first line %q, want 3", got)
	}
	if out := k.run(ctx, fmt.Sprintf(widgetYAML, 4), "apply", "-f", "-"); !strings.Contains(out, "configured") {
		t.Fatalf("second apply: %s", out)
	}
	if got := next(); got != "4" {
		t.Fatalf("get -w after the apply: %q, want 4", got)
	}

	ssa := "apiVersion: widgets.listwatch.dev/v1\nkind: Widget\nmetadata: {name: k1}\nspec: {size: 5}\n"
	if out := k.run(ctx, ssa, "apply", "--server-side", "--force-conflicts", "--field-manager", "sizer", "-f", "-"); !strings.Contains(out, "serverside-applied") {
		t.Fatalf("server-side apply: %s", out)
	}
	if got := next(); got != "5" {
		t.Fatalf("get -w after the server-side apply: %q, want 5", got)
	}
	managers := k.run(ctx, "", "get", "widget", "k1", "--show-managed-fields", "-o", "jsonpath={.metadata.managedFields[*].manager}")
	if !strings.Contains(managers, "sizer") {
		t.Errorf("managers %q lack sizer", managers)
	}

	if out := k.run(ctx, "", "delete", "widget", "k1"); !strings.Contains(out, "deleted") {
		t.Fatalf("delete: %s", out)
	}
	if out, err := k.cmd(ctx, "", "get", "widget", "k1").CombinedOutput(); err == nil || !strings.Contains(string(out), "NotFound") {
		t.Fatalf("get after delete: %v %s", err, out)
	}
}
