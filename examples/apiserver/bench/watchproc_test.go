package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

var (
	flagWatchProc  = flag.Bool("apiserver.watchproc", false, "run each fan-out's watchers in a process of their own (then the measured process's CPU is the server's, etcd's and the writer's; and 10,000 HTTP/1.1 watchers need 10,000 descriptors per process, not 20,000)")
	flagWatchChild = flag.String("apiserver.watchchild", "", "run the watchers this JSON describes and answer the parent on stdout (set by the parent)")
)

// fanWatchers is the watchers of one fan-out row, in this process or in a
// watch process.
type fanWatchers interface {
	// await waits, polling every poll for up to deliverBudget, until
	// every watcher still watching received want events, and returns the
	// events delivered and whether they all did.
	await(want int64, poll time.Duration) (int64, bool)
	// stop reports the lost watchers and the latencies, then stops the
	// watchers (up to stopBudget).
	stop() stopReport
}

// openReport is how the watchers of a row were opened.
type openReport struct {
	Refused int
	// Dials counts the connections the watchers' clients dialed; H1 and
	// H2 the responses they received over HTTP/1.1 and HTTP/2.
	Dials, H1, H2 int64
	// CPU is the watch process's CPU time so far (0 in this process).
	CPU time.Duration
}

// stopReport is how the watchers of a row ended.
type stopReport struct {
	Lost       int
	Reasons    string // why watchers were refused or lost
	NotStopped int
	P50, P99   time.Duration
	Max        time.Duration
	// CPU is the watch process's CPU time since the open (0 in this
	// process).
	CPU time.Duration
}

// openFan opens w watchers of the fan namespace from rv over proto, in
// this process, or in a watch process of their own with
// -apiserver.watchproc.
func openFan(b *testing.B, ctx context.Context, srv *running, rv string, w int, proto protocol) (fanWatchers, openReport) {
	b.Helper()
	if *flagWatchProc {
		return startWatchProc(b, srv, "fan", rv, w, proto)
	}
	dials0, h10, h20 := srv.dials.Load(), srv.h1.Load(), srv.h2.Load()
	ctx, cancel := context.WithCancel(ctx)
	l := &localWatchers{lat: &latencies{}, cancel: cancel}
	l.ws = openWatchers(b, ctx, srv, "fan", rv, w, proto, l.lat)
	return l, openReport{Refused: l.ws.refused(), Dials: srv.dials.Load() - dials0, H1: srv.h1.Load() - h10, H2: srv.h2.Load() - h20}
}

// localWatchers is a row's watchers in this process.
type localWatchers struct {
	ws     *watchers
	lat    *latencies
	cancel context.CancelFunc
}

func (l *localWatchers) await(want int64, poll time.Duration) (int64, bool) {
	return l.ws.await(want, poll)
}

func (l *localWatchers) stop() stopReport {
	r := stopReport{Lost: l.ws.lost(), Reasons: l.ws.reasons()}
	l.cancel()
	r.NotStopped = l.ws.wait()
	r.P50, r.P99, r.Max = l.lat.quantile(0.50), l.lat.quantile(0.99), l.lat.quantile(1)
	return r
}

// watchSpec is what a watch process watches.
type watchSpec struct {
	Host        string
	BearerToken string
	TLS         rest.TLSClientConfig
	NS, RV      string
	Watchers    int
	Protocol    protocol
}

// watchPrefix starts the lines a watch process answers on.
const watchPrefix = "WATCHPROC "

// watchProc is a row's watchers in a watch process: this test binary run
// with -apiserver.watchchild, driven by lines on its stdin ("AWAIT want
// poll", "STOP") and answering each with a line on its stdout.
type watchProc struct {
	b       *testing.B
	cmd     *exec.Cmd
	in      io.WriteCloser
	answers chan string
	exited  chan error
	cpu0    time.Duration
}

func startWatchProc(b *testing.B, srv *running, ns, rv string, w int, proto protocol) (fanWatchers, openReport) {
	b.Helper()
	spec, err := json.Marshal(watchSpec{Host: srv.cfg.Host, BearerToken: srv.cfg.BearerToken, TLS: srv.cfg.TLSClientConfig,
		NS: ns, RV: rv, Watchers: w, Protocol: proto})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkApiserver$", "-test.benchtime=1x",
		"-apiserver.serverlog="+strconv.FormatBool(*flagServerLog), "-apiserver.watchchild="+string(spec))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatalf("watch process: %v", err)
	}
	p := &watchProc{b: b, cmd: cmd, in: in, answers: make(chan string, 1), exited: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), watchPrefix); ok {
				p.answers <- a
			}
		}
		close(p.answers)
		p.exited <- cmd.Wait()
	}()
	var op openReport
	p.answer("OPEN", openBudget+time.Minute, &op)
	p.cpu0 = op.CPU
	return p, op
}

// answer waits up to timeout for the watch process's answer of kind and
// decodes it into v; the process's failing or not answering in time fails
// the benchmark (after killing it).
func (p *watchProc) answer(kind string, timeout time.Duration, v any) {
	p.b.Helper()
	select {
	case a, ok := <-p.answers:
		if !ok {
			p.b.Fatalf("watch process ended before its %s answer: %v", kind, <-p.exited)
		}
		js, found := strings.CutPrefix(a, kind+" ")
		if !found {
			p.b.Fatalf("watch process answered %q, want %s", a, kind)
		}
		if err := json.Unmarshal([]byte(js), v); err != nil {
			p.b.Fatalf("watch process's %s answer: %v", kind, err)
		}
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		p.b.Fatalf("watch process gave no %s answer within %v", kind, timeout)
	}
}

func (p *watchProc) send(format string, args ...any) {
	p.b.Helper()
	if _, err := fmt.Fprintf(p.in, format+"\n", args...); err != nil {
		p.b.Fatalf("watch process: %v", err)
	}
}

type awaitAnswer struct {
	Delivered int64
	Settled   bool
}

func (p *watchProc) await(want int64, poll time.Duration) (int64, bool) {
	p.send("AWAIT %d %d", want, poll)
	var a awaitAnswer
	p.answer("AWAIT", deliverBudget+time.Minute, &a)
	return a.Delivered, a.Settled
}

func (p *watchProc) stop() stopReport {
	p.send("STOP")
	var r stopReport
	p.answer("STOP", stopBudget+time.Minute, &r)
	r.CPU -= p.cpu0
	p.in.Close()
	select {
	case err := <-p.exited:
		if err != nil {
			p.b.Errorf("watch process: %v", err)
		}
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		p.b.Errorf("watch process did not exit within a minute of its STOP answer")
	}
	return r
}

// runWatchChild is the watch process: it opens the watchers spec
// describes, answers OPEN, then each AWAIT and the STOP, and returns after
// the STOP (or when its stdin closes).
func runWatchChild(b *testing.B, specJSON string) {
	var spec watchSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		b.Fatalf("bad -apiserver.watchchild: %v", err)
	}
	raiseFileLimit(b, []int{spec.Watchers}, []protocol{spec.Protocol}, 1)
	cfg := &rest.Config{Host: spec.Host, BearerToken: spec.BearerToken, TLSClientConfig: spec.TLS, QPS: -1}
	cfg.NegotiatedSerializer = server.Codecs.WithoutConversion()
	srv := &running{cfg: cfg}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l := &localWatchers{lat: &latencies{}, cancel: cancel}
	l.ws = openWatchers(b, ctx, srv, spec.NS, spec.RV, spec.Watchers, spec.Protocol, l.lat)
	emit := func(kind string, v any) {
		js, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s%s %s\n", watchPrefix, kind, js)
	}
	emit("OPEN", openReport{Refused: l.ws.refused(), Dials: srv.dials.Load(), H1: srv.h1.Load(), H2: srv.h2.Load(), CPU: processCPU(b)})
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 3 && f[0] == "AWAIT":
			want, err1 := strconv.ParseInt(f[1], 10, 64)
			poll, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				b.Fatalf("bad command %q", sc.Text())
			}
			got, settled := l.await(want, time.Duration(poll))
			emit("AWAIT", awaitAnswer{Delivered: got, Settled: settled})
		case len(f) == 1 && f[0] == "STOP":
			r := l.stop()
			r.CPU = processCPU(b)
			emit("STOP", r)
			return
		default:
			b.Fatalf("bad command %q", sc.Text())
		}
	}
	l.stop() // the parent went away
}
