package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/embedtest"
)

// startServe runs serve in this process until ctx ends and returns its
// base URL and the channel of its result.
func startServe(t *testing.T, ctx context.Context, args ...string) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"serve"}, args...), pw, io.Discard)
		pw.Close()
		done <- err
	}()
	var baseURL string
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "serving ") {
			baseURL = strings.TrimSpace(l[strings.LastIndex(l, " on ")+4:])
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if baseURL == "" {
		t.Fatalf("serve did not start: %v", <-done)
	}
	return baseURL, done
}

// TestServeOverTLSEtcdCluster: serve runs over a three-member etcd that
// requires client TLS, given the etcd TLS flags (done-when step 8 of issue
// #13); without the client certificate it cannot connect.
func TestServeOverTLSEtcdCluster(t *testing.T) {
	c := embedtest.StartCluster(t, embedtest.Options{ClientTLS: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	eps := strings.Join(c.Endpoints(), ",")
	err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--etcd-servers", eps, "--etcd-cafile", c.TLS.CAFile},
		io.Discard, io.Discard)
	if err == nil || exitCode(err) != 1 {
		t.Errorf("without a client certificate: err = %v, want a failure to reach etcd", err)
	}
	baseURL, done := startServe(t, ctx, "--listen", "127.0.0.1:0", "--etcd-servers", eps,
		"--etcd-cafile", c.TLS.CAFile, "--etcd-certfile", c.TLS.ClientCertFile, "--etcd-keyfile", c.TLS.ClientKeyFile)
	api := &apiClient{baseURL: baseURL, http: &http.Client{Timeout: 10 * time.Second}}
	obj, err := api.create(ctx, "default", "over-tls", map[string]any{"color": "green"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Client.Get(ctx, "/registry/widgets/default/over-tls")
	if err != nil || len(resp.Kvs) != 1 || resp.Header.Revision < 1 {
		t.Fatalf("object not in the TLS cluster: %v %v", resp, err)
	}
	if obj.GetResourceVersion() == "" {
		t.Error("created object has no resourceVersion")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

func TestServeSecureFlagsUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--listen", "0.0.0.0:0"},
		{"serve", "--tls-cert-file", "a.crt"},
		{"serve", "--client-ca-file", "ca.crt"},
	} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
}

// TestServeTLSWithTokens: serve --cert-dir --token-auth-file serves HTTPS
// with a self-signed certificate written for clients to trust; requests
// need a token.
func TestServeTLSWithTokens(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("s3cret,alice,1,\"admins\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	baseURL, done := startServe(t, ctx, "--listen", "127.0.0.1:0", "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens)
	if !strings.HasPrefix(baseURL, "https://") {
		t.Fatalf("base URL %q, want https", baseURL)
	}
	pem, err := os.ReadFile(filepath.Join(dir, "certs", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	get := func(token string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/apis/demo.listwatch.dev/v1/widgets", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("s3cret"); code != http.StatusOK {
		t.Errorf("with the token: %d, want 200", code)
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
