package server

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKubectl drives the server with a stock kubectl, when one is on PATH:
// discovery, create, list with selectors, merge patch, get, delete and a
// NotFound error, exactly as kubectl sends them.
func TestKubectl(t *testing.T) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	f := newFixture(t)
	cache := t.TempDir()
	require.NoError(t, os.WriteFile(cache+"/none", []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	run := func(stdin string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.CommandContext(testCtx(t), bin, append([]string{"--server", f.ts.URL, "--cache-dir", cache,
			"--kubeconfig", cache + "/none"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	must := func(stdin string, args ...string) string {
		t.Helper()
		out, err := run(stdin, args...)
		require.NoError(t, err, out)
		return out
	}
	out := must("", "api-resources", "--api-group=demo.listwatch.dev", "--no-headers")
	require.Contains(t, out, "widgets")
	require.Contains(t, out, "gadgets")
	manifest := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\n  labels: {app: web}\nspec:\n  nodeName: n1\n"
	require.Equal(t, "widget.demo.listwatch.dev/w1 created", must(manifest, "create", "-f", "-"))
	require.Equal(t, "widget.demo.listwatch.dev/w1", must("", "get", "widgets", "-n", "default", "-l", "app=web", "-o", "name"))
	require.Equal(t, "", must("", "get", "widgets", "-A", "--field-selector", "spec.nodeName=n2", "-o", "name"))
	must("", "patch", "widget", "w1", "-n", "default", "--type=merge", "-p", `{"spec":{"replicas":3}}`)
	require.Equal(t, "3 2", must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"))
	must("", "patch", "widget", "w1", "-n", "default", "--type=json", "-p", `[{"op":"add","path":"/spec/tags","value":["a"]}]`)
	require.Equal(t, `["a"]`, must("", "get", "widget", "w1", "-n", "default", "-o", "jsonpath={.spec.tags}"))
	require.Contains(t, must("", "delete", "widget", "w1", "-n", "default"), `"w1" deleted`)
	out, err = run("", "get", "widget", "w1", "-n", "default")
	require.Error(t, err)
	require.Contains(t, out, "NotFound")
}
