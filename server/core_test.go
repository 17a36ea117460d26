package server

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withCoreNodes adds a cluster-scoped core-group resource "nodes" (kind
// Node at /api/v1) to the fixture's configuration.
func withCoreNodes(tb testing.TB) func(*Config) {
	return func(c *Config) {
		c.Resources = append(c.Resources, Resource{Version: "v1", Plural: "nodes", Kind: "Node",
			Storage: newStore(tb, "/minions"), KeyRoot: "/minions", ShortNames: []string{"no"},
			PrinterColumns: []PrinterColumn{{Name: "Zone", Type: "string",
				JSONPath: `.metadata.labels.topology\.kubernetes\.io/zone`}}})
	}
}

// TestCoreGroup: a resource with an empty group is served at /api/v1 like
// Kubernetes' legacy group: /api lists v1, /api/v1 lists its resources,
// /apis does not list the core group, objects are created, read, listed and
// deleted below /api/v1 with apiVersion "v1", and the OpenAPI documents name
// them as Kubernetes does.
func TestCoreGroup(t *testing.T) {
	f := newFixture(t, withCoreNodes(t))

	var versions metav1.APIVersions
	require.NoError(t, json.Unmarshal(f.do(http.MethodGet, "/api", "", nil).body, &versions))
	require.Equal(t, []string{"v1"}, versions.Versions)
	var rl metav1.APIResourceList
	r := f.do(http.MethodGet, "/api/v1", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.NoError(t, json.Unmarshal(r.body, &rl))
	require.Equal(t, "v1", rl.GroupVersion)
	require.Len(t, rl.APIResources, 1)
	require.Equal(t, "nodes", rl.APIResources[0].Name)
	require.False(t, rl.APIResources[0].Namespaced)
	f.do(http.MethodGet, "/api/v2", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	var groups metav1.APIGroupList
	require.NoError(t, json.Unmarshal(f.do(http.MethodGet, "/apis", "", nil).body, &groups))
	for _, g := range groups.Groups {
		require.NotEmpty(t, g.Name)
	}

	node := map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "n1",
		"labels": map[string]any{"topology.kubernetes.io/zone": "z1"}}}
	r = f.do(http.MethodPost, "/api/v1/nodes", "application/json", node)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	got := f.do(http.MethodGet, "/api/v1/nodes/n1", "", nil).object(t)
	require.Equal(t, "v1", got.GetAPIVersion())
	l := f.do(http.MethodGet, "/api/v1/nodes", "", nil).list(t)
	require.Equal(t, "v1", l.GetAPIVersion())
	require.Equal(t, "NodeList", l.GetKind())
	require.Len(t, l.Items, 1)
	f.do(http.MethodGet, "/api/v1/namespaces/default/nodes/n1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	bad := map[string]any{"apiVersion": "core/v1", "kind": "Node", "metadata": map[string]any{"name": "n2"}}
	f.do(http.MethodPost, "/api/v1/nodes", "application/json", bad).status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)

	v2 := string(f.do(http.MethodGet, "/openapi/v2", "", nil).body)
	require.Contains(t, v2, `"/api/v1/nodes/{name}"`)
	require.Contains(t, v2, `"io.k8s.api.core.v1.Node"`)
	require.Equal(t, http.StatusOK, f.doAccept(http.MethodGet, "/openapi/v3/api/v1", "", "application/json", nil).code)

	require.Equal(t, http.StatusOK, f.do(http.MethodDelete, "/api/v1/nodes/n1", "", nil).code)
	f.do(http.MethodGet, "/api/v1/nodes/n1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}

// TestKubectlCoreGroup: stock kubectl finds, creates, lists (as a table
// with the printer column) and deletes core-group nodes.
func TestKubectlCoreGroup(t *testing.T) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	f := newFixture(t, withCoreNodes(t))
	cache := t.TempDir()
	require.NoError(t, os.WriteFile(cache+"/none", []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	must := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(testCtx(t), bin, append([]string{"--server", f.ts.URL, "--cache-dir", cache,
			"--kubeconfig", cache + "/none"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	manifest := "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels: {topology.kubernetes.io/zone: z1}\n"
	require.Equal(t, "node/n1 created", must(manifest, "create", "-f", "-"))
	out := must("", "get", "nodes")
	require.Regexp(t, `NAME\s+ZONE\s+AGE`, out)
	require.Regexp(t, `n1\s+z1\s+`, out)
	require.Equal(t, "node/n1", must("", "get", "no", "-o", "name"))
	require.Contains(t, must("", "delete", "node", "n1"), `"n1" deleted`)
}
