package demo

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kubectl runs the real kubectl against a stack's API server, with a
// kubeconfig and a discovery cache of its own.
type kubectl struct {
	path, server, dir string
}

// newKubectl finds kubectl on PATH and prepares a config directory below
// dir.
func newKubectl(server, dir string) (*kubectl, error) {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		return nil, fmt.Errorf("demo: kubectl not found on PATH: %w", err)
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: demo
  cluster:
    server: %s
contexts:
- name: demo
  context:
    cluster: demo
    namespace: default
current-context: demo
`, server)
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	return &kubectl{path: path, server: server, dir: dir}, nil
}

// run runs kubectl with args and returns its standard output; a non-zero
// exit is an error carrying its standard error.
func (k *kubectl) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, k.path, append([]string{"--kubeconfig", filepath.Join(k.dir, "kubeconfig"),
		"--cache-dir", filepath.Join(k.dir, "cache")}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG=", "HOME="+k.dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errOut.String()))
	}
	return out.String(), nil
}

// line is the command line to show for args.
func (k *kubectl) line(args ...string) string {
	return "kubectl " + strings.Join(args, " ")
}
