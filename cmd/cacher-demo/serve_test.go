package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestHelpExitsZero: -h and --help are asked-for output, not errors.
func TestHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"serve", "--help"}, {"serve", "-h"}, {"watch", "--help"}} {
		err := run(context.Background(), args, io.Discard, io.Discard)
		if code := exitCode(err); code != 0 {
			t.Errorf("%v: exit %d (%v), want 0", args, code, err)
		}
	}
}

// TestServeRefusesAnonymousWritesOffLoopback: --anonymous-auth on a
// non-loopback address without --write-groups would let anyone write; serve
// refuses it and says what to add.
func TestServeRefusesAnonymousWritesOffLoopback(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("s3cret,alice,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve", "--listen", "0.0.0.0:0", "--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens, "--anonymous-auth"}, io.Discard, io.Discard)
	if exitCode(err) != 2 || err == nil || !strings.Contains(err.Error(), "--write-groups") {
		t.Fatalf("err = %v (exit %d), want a usage error naming --write-groups", err, exitCode(err))
	}
}

// TestServeLogs: serve logs its start-up (address, etcd, TLS and auth
// mode) and, with -v 2, every request, as JSON with --log-format json;
// /readyz runs its etcd check.
func TestServeLogs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr lockedBuffer
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "-v", "2", "--log-format", "json",
			"--request-timeout", "5s", "--slow-watcher-timeout", "3s", "--max-requests-inflight", "0",
			"--http2-max-streams-per-connection", "1000"}, pw, &stderr)
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
		t.Fatalf("serve did not start: %v\n%s", <-done, stderr.String())
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, path := range []string{"/apis/demo.listwatch.dev/v1/namespaces/default/widgets", "/readyz/etcd"} {
		resp, err := client.Get(baseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	records := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON log line: %q", l)
		}
		key, _ := m["msg"].(string)
		if v, ok := m["verb"].(string); ok {
			key += " " + v
		}
		records[key] = m
	}
	for key, want := range map[string]map[string]any{
		"serving":       {"address": baseURL, "tls": "none (plain HTTP)", "authorization": "allow all", "requestTimeout": "5s"},
		"etcd embedded": {},
		"HTTP LIST":     {"status": 200.0, "user": "system:anonymous", "path": "/apis/demo.listwatch.dev/v1/namespaces/default/widgets"},
		"shutting down": {},
	} {
		got, ok := records[key]
		if !ok {
			t.Errorf("no %q log record in:\n%s", key, stderr.String())
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", key, k, got[k], v)
			}
		}
	}
}
