package httplw

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// childEnv makes the test binary run serveChild instead of the tests.
const childEnv = "LISTWATCH_HTTPLW_CHILD"

// serveChild runs in a separate process: its own embedded etcd, a cacher
// and the HTTP server over it, whose address it prints as "ADDR host:port"; it stops when
// its stdin closes.
func serveChild() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 1
	}
	etcd, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		return fail(err)
	}
	defer etcd.Close()
	st, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList, ResourcePrefix: "/widgets"})
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	c, err := cacher.New(cacher.Config{Storage: st, ResourcePrefix: "/widgets",
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList, GetAttrs: widget.GetAttrs})
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cacherDone := make(chan struct{})
	go func() {
		defer close(cacherDone)
		_ = c.Run(ctx)
	}()
	defer func() { cancel(); <-cacherDone }()
	if err := c.WaitReady(ctx); err != nil {
		return fail(err)
	}
	srv, err := server.New(server.Config{Resources: []server.Resource{{
		Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
		Storage: c, KeyRoot: "/widgets", GetAttrs: widget.GetAttrs,
	}}})
	if err != nil {
		return fail(err)
	}
	l, err := server.Listen("127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	fmt.Printf("ADDR %s\n", l.Addr())
	if err := srv.Serve(serveCtx, l); err != nil {
		return fail(err)
	}
	return 0
}

// startChild starts the server process and returns its base URL.
func startChild(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=serve")
	cmd.Stderr = t.Output()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			require.NoError(t, err, "server process exit")
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Error("server process did not stop after its stdin closed")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "reading the server address")
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ADDR ")
	require.True(t, ok, line)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return "http://" + addr
}

// send issues a write to the child server and checks its status code.
func send(t *testing.T, c *http.Client, method, url, ctype string, body any, want int) {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(testCtx(t), method, url, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", ctype)
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	require.Equal(t, want, resp.StatusCode, string(data))
}

// TestInformerAcrossProcesses runs the HTTP server in another process and
// an informer over httplw here: it syncs, then follows creates, updates
// and deletes (across server-ended watches, timeoutSeconds 1 s) until its
// store equals the server's list.
func TestInformerAcrossProcesses(t *testing.T) {
	base := startChild(t)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	coll := base + "/apis/demo.listwatch.dev/v1/namespaces/ns/widgets"
	for i := range 20 {
		send(t, client, http.MethodPost, coll, "application/json",
			widget.NewUnstructuredWidget("ns", fmt.Sprintf("w%02d", i), nil).Object, http.StatusCreated)
	}
	lw, err := New(Config{BaseURL: base, Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets",
		Namespace: "ns", HTTPClient: client})
	require.NoError(t, err)
	factory := reflector.NewInformerFactory()
	inf, err := reflector.InformerFor[*unstructured.Unstructured](factory, widget.Resource, lw,
		reflector.WithMinWatchTimeout(time.Second), reflector.WithPageSize(7))
	require.NoError(t, err)
	var adds, updates, deletes atomic.Int64
	_, err = inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*unstructured.Unstructured]{
		AddFunc:    func(*unstructured.Unstructured, bool) { adds.Add(1) },
		UpdateFunc: func(_, _ *unstructured.Unstructured) { updates.Add(1) },
		DeleteFunc: func(*unstructured.Unstructured, bool) { deletes.Add(1) },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx)
	defer func() {
		cancel()
		factory.Shutdown()
		require.True(t, inf.IsStopped())
	}()
	syncCtx, syncCancel := context.WithTimeout(ctx, 20*time.Second)
	defer syncCancel()
	require.True(t, reflector.WaitForCacheSync(syncCtx, inf.HasSynced))
	// The first list may be served by the cache at any RV ("0"), so it can
	// lag the writes above; the watch from its RV brings the rest.
	waitConverged(t, inf, lw)

	for i := range 5 {
		send(t, client, http.MethodPatch, fmt.Sprintf("%s/w%02d", coll, i), "application/merge-patch+json",
			map[string]any{"spec": map[string]any{"replicas": i + 1}}, http.StatusOK)
	}
	for i := 17; i < 20; i++ {
		send(t, client, http.MethodDelete, fmt.Sprintf("%s/w%02d", coll, i), "application/json", map[string]any{}, http.StatusOK)
	}
	// Let at least one watch end on its timeout, then write more.
	time.Sleep(1500 * time.Millisecond) // waiting for wall-clock watch expiry, not for a condition
	send(t, client, http.MethodPost, coll, "application/json", widget.NewUnstructuredWidget("ns", "late", nil).Object, http.StatusCreated)

	waitConverged(t, inf, lw)
	require.Equal(t, int64(21), adds.Load())
	require.Equal(t, int64(5), updates.Load())
	require.Equal(t, int64(3), deletes.Load())
}

// waitConverged waits until the informer's store equals the server's
// current list (names and RVs).
func waitConverged(t *testing.T, inf *reflector.SharedIndexInformer[*unstructured.Unstructured], lw *ListerWatcher) {
	t.Helper()
	want := serverState(t, lw)
	deadline := time.Now().Add(20 * time.Second)
	for storeState(inf) != want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond) // polling the informer's store with a deadline
	}
	require.Equal(t, want, storeState(inf))
}

// serverState is "name@rv ..." of the server's current list.
func serverState(t *testing.T, lw *ListerWatcher) string {
	t.Helper()
	obj, err := lw.List(testCtx(t), metav1.ListOptions{})
	require.NoError(t, err)
	var items []string
	for _, it := range obj.(*unstructured.UnstructuredList).Items {
		items = append(items, it.GetName()+"@"+it.GetResourceVersion())
	}
	sort.Strings(items)
	return strings.Join(items, " ")
}

func storeState(inf *reflector.SharedIndexInformer[*unstructured.Unstructured]) string {
	var items []string
	for _, it := range inf.GetStore().List() {
		items = append(items, it.GetName()+"@"+it.GetResourceVersion())
	}
	sort.Strings(items)
	return strings.Join(items, " ")
}
