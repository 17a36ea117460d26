package server

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	"github.com/listwatch/listwatch/embedtest"
)

// connBudgetChildEnv makes TestConnectionBudget the child: this test
// binary with RLIMIT_NOFILE lowered to 1024, serving on the package's
// embedded etcd.
//
// Protocol: the child prints "ADDR <address> LIMIT <n>", then its log
// lines; for each "CHECK" on stdin it opens a new etcd client, writes
// through it and creates a file, and prints "CHECK ok ..." or "CHECK
// failed: ..."; it stops serving when stdin closes.
const connBudgetChildEnv = "LISTWATCH_CONNBUDGET_CHILD"

// TestConnectionBudget: 1,100 connections that never finish their headers
// against a process with 1,024 descriptors fill the connection budget; the
// server stops accepting and logs it instead of running out of
// descriptors, so its embedded etcd and new etcd connections keep
// working, and a normal request is answered once the header timeout has
// cut the slow connections.
func TestConnectionBudget(t *testing.T) {
	if os.Getenv(connBudgetChildEnv) != "" {
		connBudgetChild(t)
		return
	}
	if runtime.GOOS != "linux" {
		t.Skip("lowers RLIMIT_NOFILE of a child process and counts /proc/self/fd")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConnectionBudget$", "-test.count=1")
	cmd.Env = append(os.Environ(), connBudgetChildEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var output []string
	waitLine := func(prefix string) string {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("child exited before printing %q:\n%s", prefix, strings.Join(output, "\n"))
				}
				output = append(output, l)
				if strings.Contains(l, prefix) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q from the child:\n%s", prefix, strings.Join(output, "\n"))
			}
		}
	}
	var addr string
	var limit int
	_, err = fmt.Sscanf(waitLine("ADDR "), "ADDR %s LIMIT %d", &addr, &limit)
	require.NoError(t, err)
	require.Equal(t, 1024-256, limit, "budget: RLIMIT_NOFILE minus its reserve")

	conns := make([]net.Conn, 0, 1100)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 1100 { // more than the child has descriptors
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = io.WriteString(c, "GET /version HTTP/1.1\r\nHost: slow\r\n") // headers never finished
		require.NoError(t, err)
	}
	waitLine("connection limit reached")
	_, err = io.WriteString(stdin, "CHECK\n")
	require.NoError(t, err)
	require.Contains(t, waitLine("CHECK "), "CHECK ok", "etcd or a file could not be opened in the child")

	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("http://" + addr + apiBase + "/namespaces/ns/widgets")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	waitLine("accepting connections again")

	require.NoError(t, stdin.Close())
	for l := range lines {
		output = append(output, l)
	}
	require.NoError(t, cmd.Wait(), strings.Join(output, "\n"))
}

// connBudgetChild is the child of TestConnectionBudget.
func connBudgetChild(t *testing.T) {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	lim.Cur = 1024
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	srv, err := New(Config{Resources: []Resource{widgets(newStore(t, "/widgets"))},
		Logger: slog.New(slog.NewTextHandler(os.Stdout, nil)), ReadHeaderTimeout: 5 * time.Second})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	fmt.Printf("ADDR %s LIMIT %d\n", ln.Addr(), srv.maxConnections())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		if sc.Text() == "CHECK" {
			fmt.Println(childCheck(t))
		}
	}
	cancel()
	require.NoError(t, <-done)
}

// childCheck opens a new etcd connection, writes through it and creates a
// file: what an embedded etcd needs descriptors for.
func childCheck(t *testing.T) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcdServer.Endpoints, DialTimeout: 5 * time.Second,
		Logger: zap.NewNop(), DialOptions: []grpc.DialOption{grpc.WithBlock()}}) //nolint:staticcheck // fail on a dial error
	if err != nil {
		return "CHECK failed: new etcd client: " + err.Error()
	}
	defer cli.Close()
	if _, err := cli.Put(ctx, embedtest.Prefix(t)+"/alive", "yes"); err != nil {
		return "CHECK failed: etcd put: " + err.Error()
	}
	f, err := os.CreateTemp("", "listwatch-budget-")
	if err != nil {
		return "CHECK failed: creating a file: " + err.Error()
	}
	f.Close()
	os.Remove(f.Name())
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return "CHECK failed: " + err.Error()
	}
	return fmt.Sprintf("CHECK ok: %d descriptors open", len(fds))
}
