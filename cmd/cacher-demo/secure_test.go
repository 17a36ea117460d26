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
)

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
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--cert-dir", filepath.Join(dir, "certs"),
			"--token-auth-file", tokens}, pw, io.Discard)
		pw.Close()
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
	if !strings.HasPrefix(baseURL, "https://") {
		t.Fatalf("base URL %q, want https", baseURL)
	}
	pem, err := os.ReadFile(filepath.Join(dir, "certs", "apiserver.crt"))
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
