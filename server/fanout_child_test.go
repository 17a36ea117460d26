package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/transport"
)

// The HTTP FANOUT clients run in a child process (this test binary with
// fanoutChildEnv set), so that the benchmark process's CPU time is the
// server side only: HTTP server, cacher, etcd and the writer.
//
// Protocol: the child gets "baseURL watchers startRV" in the environment,
// opens its watches and prints "READY"; the parent writes, then sends
// "DONE <writes>" on stdin; the child waits until every watcher has every
// write (or 2 minutes) and prints one JSON fanoutReport line.
const fanoutChildEnv = "LISTWATCH_FANOUT_CHILD"

// fanoutReport is what the child reports.
type fanoutReport struct {
	Delivered    int64    `json:"delivered"`
	LastDelivery int64    `json:"lastDelivery"` // unix ns of the last delivered write
	P50          int64    `json:"p50"`
	P99          int64    `json:"p99"`
	Rewatches    int64    `json:"rewatches"`
	CPU          int64    `json:"cpu"` // the child's CPU ns while writes were delivered
	Errors       []string `json:"errors,omitempty"`
}

// fanoutWatcher follows one HTTP watch, re-watching from its last RV if
// the stream ends, and records write-to-delivery latencies.
type fanoutWatcher struct {
	lw        *httplw.ListerWatcher
	latencies []time.Duration
	got       atomic.Int64
	last      atomic.Int64 // unix ns of the last delivery
	rewatches *atomic.Int64
}

func (w *fanoutWatcher) run(ctx context.Context, rv string, ready *sync.WaitGroup) error {
	first := true
	for ctx.Err() == nil {
		wi, err := w.lw.Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if first {
			ready.Done()
			first = false
		}
		if err != nil {
			return err
		}
		if last := w.consume(wi); last != "" {
			rv = last
		}
		wi.Stop()
		if ctx.Err() == nil {
			w.rewatches.Add(1)
		}
	}
	return nil
}

func (w *fanoutWatcher) consume(wi watch.Interface) (lastRV string) {
	for ev := range wi.ResultChan() {
		u, ok := ev.Object.(*widget.Widget)
		if !ok {
			continue
		}
		lastRV = u.GetResourceVersion()
		if ev.Type != watch.Modified {
			continue
		}
		now := time.Now().UnixNano()
		if ts, err := strconv.ParseInt(u.GetAnnotations()["bench/ts"], 10, 64); err == nil {
			w.latencies = append(w.latencies, time.Duration(now-ts))
		}
		w.last.Store(now)
		w.got.Add(1)
	}
	return lastRV
}

// fanoutChild is the client process; args is "baseURL watchers startRV".
func fanoutChild(args string) int {
	f := strings.Fields(args)
	if len(f) != 3 {
		fmt.Fprintln(os.Stderr, "fanout child: bad args", args)
		return 2
	}
	n, _ := strconv.Atoi(f[1])
	// One watch start per watcher, all at once: no client-side rate limit.
	rt, err := transport.New(transport.Config{Base: newBenchClient().Transport, QPS: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client := &http.Client{Transport: rt}
	lw, err := httplw.New(httplw.Config{BaseURL: f[0], Group: group, Version: "v1", Plural: "widgets",
		Namespace: "bench", HTTPClient: client, NewFunc: widget.New, NewListFunc: widget.NewList})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithCancel(context.Background())
	var ready, done sync.WaitGroup
	var rewatches atomic.Int64
	var errMu sync.Mutex
	var rep fanoutReport
	ws := make([]*fanoutWatcher, n)
	for i := range ws {
		ws[i] = &fanoutWatcher{lw: lw, rewatches: &rewatches}
		ready.Add(1)
		done.Go(func() {
			if err := ws[i].run(ctx, f[2], &ready); err != nil && ctx.Err() == nil {
				errMu.Lock()
				rep.Errors = append(rep.Errors, err.Error())
				errMu.Unlock()
			}
		})
	}
	ready.Wait()
	cpu0 := processCPU()
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	writes := int64(-1)
	for in.Scan() {
		if v, ok := strings.CutPrefix(in.Text(), "DONE "); ok {
			writes, _ = strconv.ParseInt(v, 10, 64)
			break
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, w := range ws {
		for w.got.Load() < writes && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // completion poll bounded by the deadline
		}
	}
	rep.CPU = int64(processCPU() - cpu0)
	cancel()
	done.Wait()
	client.CloseIdleConnections()
	var all []time.Duration
	for _, w := range ws {
		rep.Delivered += w.got.Load()
		rep.LastDelivery = max(rep.LastDelivery, w.last.Load())
		all = append(all, w.latencies...)
	}
	slices.Sort(all)
	if len(all) > 0 {
		rep.P50, rep.P99 = int64(all[len(all)/2]), int64(all[len(all)*99/100])
	}
	rep.Rewatches = rewatches.Load()
	out, _ := json.Marshal(rep)
	fmt.Println(string(out))
	return 0
}

// fanoutClients is the parent's handle on the child process.
type fanoutClients struct {
	cmd   *exec.Cmd
	stdin *os.File
	out   *bufio.Reader
}

// startFanoutClients starts the child and waits until its watches are open.
func startFanoutClients(b *testing.B, baseURL string, watchers int, startRV uint64) *fanoutClients {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", fanoutChildEnv, baseURL, watchers, startRV))
	cmd.Stderr = os.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdin = r
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r.Close()
	c := &fanoutClients{cmd: cmd, stdin: w, out: bufio.NewReader(stdout)}
	if line, err := c.out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "READY" {
		c.kill()
		b.Fatalf("fanout child: %q %v", line, err)
	}
	return c
}

// finish tells the child how many writes to expect and returns its report.
func (c *fanoutClients) finish(b *testing.B, writes int) fanoutReport {
	b.Helper()
	defer c.kill()
	fmt.Fprintf(c.stdin, "DONE %d\n", writes)
	line, err := c.out.ReadString('\n')
	if err != nil {
		b.Fatalf("fanout child report: %v", err)
	}
	var rep fanoutReport
	if err := json.Unmarshal([]byte(line), &rep); err != nil {
		b.Fatalf("fanout child report %q: %v", line, err)
	}
	return rep
}

func (c *fanoutClients) kill() {
	c.stdin.Close()
	done := make(chan struct{})
	go func() {
		_ = c.cmd.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}
