package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/cluster/controllers"
	"github.com/listwatch/listwatch/examples/cluster/demo"
	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/transport"
)

// childEnv, when set (to a childConfig in JSON), makes the test binary a
// controller manager process: the benchmark measures the controller
// manager's CPU and heap alone by running it in a process of its own.
const childEnv = "LISTWATCH_CLUSTER_BENCH_CM"

// childConfig is what the controller manager process needs.
type childConfig struct {
	URL, Prefix                                               string
	Endpoints                                                 []string
	Workers                                                   int
	LeaseDuration, RenewDeadline, RetryPeriod, Monitor, Grace time.Duration
}

// childOf is the child's configuration for the stack's options o.
func childOf(o demo.Options, url string, endpoints []string) childConfig {
	return childConfig{URL: url, Prefix: o.Prefix, Endpoints: endpoints, Workers: o.Workers,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		Monitor: o.Monitor, Grace: o.Grace}
}

// options are the stack options the child's replica needs.
func (c childConfig) options() demo.Options {
	return demo.Options{ClusterOptions: demorun.ClusterOptions{Prefix: c.Prefix, Monitor: c.Monitor, Grace: c.Grace},
		Workers: c.Workers, LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod}
}

// childReport is what the child answers to each "mark" line on its
// standard input.
type childReport struct {
	// CPU is its user and system CPU time so far, in seconds.
	CPU float64
	// Heap is its live heap after a collection, in bytes.
	Heap uint64
	// Created counts the pods its ReplicaSet controller created.
	Created int64
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		if err := runChild(cfg, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "controller manager process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs one controller manager replica until in ends, printing
// "elected" once it leads and a childReport for each "mark" line.
func runChild(cfgJSON string, in io.Reader, out io.Writer) error {
	var cfg childConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd, err := etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: cfg.Endpoints})
	if err != nil {
		return err
	}
	defer etcd.Close()
	rt, err := transport.New(transport.Config{Base: &http.Transport{MaxIdleConnsPerHost: 64}, QPS: -1})
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: rt}
	defer hc.CloseIdleConnections()
	mc := demo.ManagerConfig(cfg.options(), api.NewClient(cfg.URL, hc), etcd, "bench-controller-manager")
	mc.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cm, err := controllers.NewControllerManager(mc)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cm.Run(ctx) }()
	select {
	case <-cm.Manager.Elected():
	case err := <-done:
		return fmt.Errorf("stopped before it was elected: %w", err)
	case <-time.After(time.Minute):
		return errors.New("not elected within a minute")
	}
	enc := json.NewEncoder(out)
	if _, err := fmt.Fprintln(out, `"elected"`); err != nil {
		return err
	}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if err := enc.Encode(childReport{CPU: cpuSeconds(), Heap: liveHeap(), Created: cm.ReplicaSets.Created.Load()}); err != nil {
			return err
		}
	}
	cancel()
	return <-done
}

// child is the parent's handle on the controller manager process.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *json.Decoder
}

// startChild starts the controller manager process and waits until it
// leads.
func startChild(b *testing.B, cfg childConfig) *child {
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(cfgJSON))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &child{cmd: cmd, in: in, out: json.NewDecoder(outPipe)}
	var hello string
	if err := c.out.Decode(&hello); err != nil || hello != "elected" {
		_ = c.stop()
		b.Fatalf("controller manager process: %q, %v", hello, err)
	}
	return c
}

// mark asks the child for its report.
func (c *child) mark(b *testing.B) childReport {
	if _, err := fmt.Fprintln(c.in, "mark"); err != nil {
		b.Fatal(err)
	}
	var r childReport
	if err := c.out.Decode(&r); err != nil {
		b.Fatal(err)
	}
	return r
}

// stop ends the child and waits for it.
func (c *child) stop() error {
	_ = c.in.Close()
	return c.cmd.Wait()
}
