package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchOverTLSWithToken: watch --certificate-authority --token follows
// a serve that requires HTTPS and a bearer token (issue 24: without them it
// retried forever on an x509 error).
func TestWatchOverTLSWithToken(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("s3cret,alice,1,\"admins\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	baseURL, done := startServe(t, ctx, "--listen", "127.0.0.1:0", "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens)
	ca := filepath.Join(dir, "certs", "ca.crt")

	if err := run(ctx, []string{"watch", "--server", baseURL, "--certificate-authority", filepath.Join(dir, "missing.crt")},
		io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "--certificate-authority") {
		t.Fatalf("watch with a missing CA file: %v, want a usage error", err)
	}

	wctx, stop := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	watchDone := make(chan error, 1)
	go func() {
		err := run(wctx, []string{"watch", "--server", baseURL, "--certificate-authority", ca, "--token", "s3cret",
			"--namespace", "default"}, pw, io.Discard)
		pw.Close()
		watchDone <- err
	}()
	lines := bufio.NewScanner(pr)
	waitFor := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return
			}
		}
		t.Fatalf("watch ended before printing %q", want)
	}
	waitFor("watching ")

	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/apis/demo.listwatch.dev/v1/namespaces/default/widgets",
		strings.NewReader(`{"metadata":{"name":"tls-w1"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	waitFor("ADDED    default/tls-w1")
	stop()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err := <-watchDone; err != nil {
		t.Errorf("watch: %v", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
