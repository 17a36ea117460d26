package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestWalkthroughBehavesAsNarrated(t *testing.T) {
	var out, logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, nil, &out, &logs); err != nil {
		t.Fatalf("walkthrough failed: %v\n%s", err, out.String())
	}
	if strings.Contains(logs.String(), "INFO") {
		t.Errorf("library logs below WARN interleave with the narration:\n%s", logs.String())
	}
	for _, want := range []string{
		"requests that reached etcd for the resume: 0",
		"BOOKMARK rv=",
		"no 410: etcd's history filled the gap",
		"ERROR 410 Expired",
		"walkthrough complete",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBadInvocationsAreUsageErrors(t *testing.T) {
	ctx := context.Background()
	cases := [][]string{
		{"frobnicate"},
		{"serve", "--no-such-flag"},
		{"serve", "extra-arg"},
		{"serve", "--slow-watcher-timeout", "0s"},
		{"serve", "--etcd-endpoints", "http://127.0.0.1:2379", "--data-dir", "/tmp/x"},
		{"serve", "--etcd-endpoints", "::not a url"},
		{"watch"},
		{"leader"},
		{"watch", "--server", "not a url"},
		{"watch", "--server", "http://127.0.0.1:1", "--selector", "a in (("},
	}
	for _, args := range cases {
		err := run(ctx, args, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) || exitCode(err) != 2 {
			t.Errorf("%v: err = %v (exit %d), want a usage error (exit 2)", args, err, exitCode(err))
		}
	}
}

func TestServeFailsCleanlyOnPortInUseAndDeadEtcd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, []string{"serve", "--listen", ln.Addr().String()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot listen") || exitCode(err) != 1 {
		t.Errorf("port in use: err = %v", err)
	}
	err = run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--etcd-endpoints", "http://" + ln.Addr().String()}, io.Discard, io.Discard)
	if err == nil || exitCode(err) != 1 {
		t.Errorf("dead etcd: err = %v", err)
	}
}

// TestServeAndWatchAcrossProcesses runs `serve` and `watch` as separate
// processes: the informer in one process follows writes made through the
// HTTP API of the other.
func TestServeAndWatchAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "cacher-demo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	serve := startProcess(t, bin, "serve", "--listen", "127.0.0.1:0")
	baseURL := strings.TrimSpace(after(t, serve.waitLine(t, "serving "), " on "))
	api := &apiClient{baseURL: baseURL, http: &http.Client{Timeout: 10 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := api.create(ctx, "default", "before-watch", map[string]any{"color": "red"}); err != nil {
		t.Fatal(err)
	}
	w := startProcess(t, bin, "watch", "--server", baseURL, "--namespace", "default")
	w.waitLine(t, "ADDED    default/before-watch")
	obj, err := api.create(ctx, "default", "after-watch", map[string]any{"color": "blue"})
	if err != nil {
		t.Fatal(err)
	}
	w.waitLine(t, "ADDED    default/after-watch rv="+obj.GetResourceVersion())
	if _, err := api.remove(ctx, "default", "before-watch"); err != nil {
		t.Fatal(err)
	}
	w.waitLine(t, "DELETED  default/before-watch")
	w.stop(t)
	serve.stop(t)
}

type process struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
}

func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, lines: make(chan string, 1000), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return p
}

// waitLine waits for a line of output containing s and returns it.
func (p *process) waitLine(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case l := <-p.lines:
			if strings.Contains(l, s) {
				return l
			}
		case <-deadline:
			t.Fatalf("%v: no output line containing %q", p.cmd.Args, s)
		}
	}
}

// stop sends SIGTERM and requires a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("%v exited with %v after SIGTERM", p.cmd.Args, err)
	}
}

func after(t *testing.T, s, sep string) string {
	t.Helper()
	i := strings.LastIndex(s, sep)
	if i < 0 {
		t.Fatalf("%q lacks %q", s, sep)
	}
	return s[i+len(sep):]
}
