package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestKubectlKubeconfigTLS drives kubectl with kubeconfigs (done-when step
// 7 of issue #13): over TLS with a certificate authority and a token it
// works; with a wrong token it gets 401; a client certificate identifies
// its user; a reader's write is 403.
func TestKubectlKubeconfigTLS(t *testing.T) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: the end-to-end steps need the real binary")
	}
	e := newAuthEnv(t)
	e.clientCert(t, "carol", "writers")
	kubeconfig := func(name, user string) string {
		body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lw
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: u
  user:
%s
contexts:
- name: c
  context: {cluster: lw, user: u, namespace: ns}
current-context: c
`, e.url, filepath.Join(e.dir, "server-ca.crt"), user)
		p := filepath.Join(e.dir, name+".kubeconfig")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	run := func(kc, stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(testCtx(t), bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(e.dir, "cache")}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	manifest := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: NAME\nspec:\n  nodeName: n1\n"

	bob := kubeconfig("bob", "    token: bob-token")
	out, err := run(bob, strings.Replace(manifest, "NAME", "k1", 1), "apply", "-f", "-")
	require.NoError(t, err, out)
	require.Equal(t, "widget.demo.listwatch.dev/k1 created", out)
	out, err = run(bob, "", "get", "widgets", "-o", "name")
	require.NoError(t, err, out)
	require.Equal(t, "widget.demo.listwatch.dev/k1", out)

	// Without any credentials kubectl prompts for a password on a
	// terminal, which a test has not, so the tokenless 401 is checked over
	// HTTP in TestAuthentication; here a token the server does not know.
	wrong := kubeconfig("wrong", "    token: not-a-token")
	out, err = run(wrong, "", "get", "widgets")
	require.Error(t, err, out)
	require.Contains(t, out, "error: You must be logged in to the server (Unauthorized)")

	alice := kubeconfig("alice", "    token: alice-token")
	out, err = run(alice, strings.Replace(manifest, "NAME", "k2", 1), "create", "-f", "-")
	require.Error(t, err, out)
	require.Contains(t, out, `is forbidden: User "alice" cannot create resource "widgets" in API group "demo.listwatch.dev" in the namespace "ns"`)

	carol := kubeconfig("carol", fmt.Sprintf("    client-certificate: %s\n    client-key: %s",
		filepath.Join(e.dir, "carol.crt"), filepath.Join(e.dir, "carol.key")))
	out, err = run(carol, strings.Replace(manifest, "NAME", "k3", 1), "create", "-f", "-")
	require.NoError(t, err, out)
	require.Equal(t, "widget.demo.listwatch.dev/k3 created", out)

	// Done-when step 9: /readyz?verbose lists each check (open to anyone)
	// and /metrics (authenticated) shows the requests above and the watch
	// kubectl holds open.
	watch := exec.CommandContext(testCtx(t), bin, "--kubeconfig", bob, "--cache-dir", filepath.Join(e.dir, "cache"), "get", "widgets", "-w")
	require.NoError(t, watch.Start())
	t.Cleanup(func() {
		_ = watch.Process.Kill()
		_ = watch.Wait()
	})
	c := e.client(t)
	r := e.do(t, c, "GET", "/readyz?verbose", "", "")
	require.Equal(t, 200, r.code, string(r.body))
	require.Contains(t, string(r.body), "[+]etcd ok")
	require.Contains(t, string(r.body), "[+]ping ok")
	require.Eventually(t, func() bool {
		body := string(e.do(t, c, "GET", "/metrics", "bob-token", "").body)
		return strings.Contains(body, `apiserver_longrunning_requests{verb="WATCH"} 1`) &&
			strings.Contains(body, `apiserver_request_total{code="201",resource="widgets",subresource="",verb="POST"} 2`) &&
			strings.Contains(body, `apiserver_request_total{code="403",resource="widgets",subresource="",verb="POST"} 1`)
	}, 20*time.Second, 100*time.Millisecond, "metrics: %s", e.do(t, c, "GET", "/metrics", "bob-token", "").body)
}

// TestKubectlAuthCanIAndWhoami: kubectl auth can-i asks the server's
// Authorizer through a SelfSubjectAccessReview (a reader may list but not
// create; a writer may create), and kubectl auth whoami shows the user
// and groups the Authenticator found, through a SelfSubjectReview.
func TestKubectlAuthCanIAndWhoami(t *testing.T) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH: the end-to-end steps need the real binary")
	}
	e := newAuthEnv(t)
	run := func(token string, args ...string) (string, error) {
		kc := filepath.Join(e.dir, token+".kubeconfig")
		body := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: lw\n  cluster:\n    server: %s\n    certificate-authority: %s\n"+
			"users:\n- name: u\n  user:\n    token: %s\ncontexts:\n- name: c\n  context: {cluster: lw, user: u, namespace: ns}\ncurrent-context: c\n",
			e.url, filepath.Join(e.dir, "server-ca.crt"), token)
		require.NoError(t, os.WriteFile(kc, []byte(body), 0o600))
		cmd := exec.CommandContext(testCtx(t), bin, append([]string{"--kubeconfig", kc, "--cache-dir", filepath.Join(e.dir, "cache")}, args...)...)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	out, err := run("alice-token", "auth", "can-i", "list", "widgets.demo.listwatch.dev")
	require.NoError(t, err, out)
	require.Equal(t, "yes", out)
	out, err = run("alice-token", "auth", "can-i", "create", "widgets.demo.listwatch.dev")
	require.Error(t, err, "can-i exits 1 for no")
	require.Equal(t, "no - only members of writers may write", out, "no, with the Authorizer's reason")
	out, err = run("bob-token", "auth", "can-i", "create", "widgets.demo.listwatch.dev", "-n", "ns")
	require.NoError(t, err, out)
	require.Equal(t, "yes", out)

	out, err = run("bob-token", "auth", "whoami", "-o", "jsonpath={.status.userInfo.username} {.status.userInfo.groups}")
	require.NoError(t, err, out)
	require.Contains(t, out, "bob ")
	require.Contains(t, out, "writers")
	_, err = run("wrong-token", "auth", "whoami")
	require.Error(t, err, "a wrong token is 401")
}
