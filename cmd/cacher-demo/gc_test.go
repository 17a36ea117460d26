package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestServeGarbageCollector: with --garbage-collector, a foreground delete
// against the plain server completes (the dependent, then the owner, go)
// and an orphaning delete leaves the dependent without its reference.
func TestServeGarbageCollector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stderr lockedBuffer
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--garbage-collector"}, pw, &stderr)
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
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	coll := baseURL + "/apis/demo.listwatch.dev/v1/namespaces/default/widgets"
	do := func(method, url, body string) (int, map[string]any) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	create := func(name, ownerName, ownerUID string) string {
		t.Helper()
		refs := ""
		if ownerUID != "" {
			refs = fmt.Sprintf(`,"ownerReferences":[{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","name":%q,"uid":%q,"blockOwnerDeletion":true}]`, ownerName, ownerUID)
		}
		code, m := do(http.MethodPost, coll, fmt.Sprintf(`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":%q%s},"spec":{"replicas":1}}`, name, refs))
		if code != http.StatusCreated {
			t.Fatalf("create %s: %d %v", name, code, m)
		}
		return m["metadata"].(map[string]any)["uid"].(string)
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 20s\n%s", what, stderr.String())
			}
			time.Sleep(10 * time.Millisecond) // polling the server: no event to wait on
		}
	}
	gone := func(name string) func() bool {
		return func() bool { code, _ := do(http.MethodGet, coll+"/"+name, ""); return code == http.StatusNotFound }
	}

	owner := create("owner", "", "")
	create("dep", "owner", owner)
	if code, m := do(http.MethodDelete, coll+"/owner", `{"propagationPolicy":"Foreground"}`); code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("foreground delete: %d %v", code, m)
	}
	until("the dependent goes", gone("dep"))
	until("the owner goes once its dependent has", gone("owner"))

	orphaner := create("orphaner", "", "")
	create("kept", "orphaner", orphaner)
	if code, m := do(http.MethodDelete, coll+"/orphaner", `{"propagationPolicy":"Orphan"}`); code != http.StatusOK && code != http.StatusAccepted {
		t.Fatalf("orphan delete: %d %v", code, m)
	}
	until("the orphaning owner goes", gone("orphaner"))
	code, kept := do(http.MethodGet, coll+"/kept", "")
	if code != http.StatusOK {
		t.Fatalf("the orphaned dependent: %d", code)
	}
	if refs := kept["metadata"].(map[string]any)["ownerReferences"]; refs != nil {
		t.Fatalf("the orphaned dependent keeps ownerReferences %v", refs)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
