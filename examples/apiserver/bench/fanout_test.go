package bench

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// protocol is the HTTP version the watchers speak over TLS.
type protocol string

const (
	// protoH2 is HTTP/2 (negotiated by ALPN, client-go's default): the
	// watches of one client share its connection as streams.
	protoH2 protocol = "h2"
	// protoH1 is HTTP/1.1 (ALPN offers only http/1.1): one TLS connection
	// per watch.
	protoH1 protocol = "h1"
)

// parseProtocols parses -apiserver.protocols.
func parseProtocols(b *testing.B, s string) []protocol {
	b.Helper()
	var ps []protocol
	for _, f := range strings.Split(s, ",") {
		switch p := protocol(strings.TrimSpace(f)); p {
		case protoH2, protoH1:
			ps = append(ps, p)
		case "":
		default:
			b.Fatalf("bad -apiserver.protocols %q: want h2 and/or h1", s)
		}
	}
	return ps
}

// parsePaces parses -apiserver.pace.
func parsePaces(b *testing.B, s string) []time.Duration {
	b.Helper()
	var ds []time.Duration
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if f == "0" {
			ds = append(ds, 0)
			continue
		}
		d, err := time.ParseDuration(f)
		if err != nil || d < 0 {
			b.Fatalf("bad -apiserver.pace %q: want durations such as 0,200ms", s)
		}
		ds = append(ds, d)
	}
	if len(ds) == 0 {
		ds = []time.Duration{0}
	}
	return ds
}

const (
	// openConcurrency bounds the watches being opened at once, so that
	// thousands of HTTP/1.1 watchers do not all start a TLS handshake at
	// the same moment (client-go's handshake timeout is 10 s).
	openConcurrency = 100
	// openTimeout is how long one watch may take to be established.
	openTimeout = 30 * time.Second
	// openBudget is how long opening all the watchers of a run may take;
	// those not open by then are counted refused.
	openBudget = 3 * time.Minute
	// deliverBudget is how long the watchers may take, after the last
	// write, to receive every event.
	deliverBudget = 30 * time.Second
	// stopBudget is how long the watchers may take to stop.
	stopBudget = 30 * time.Second
)

// watchers is the watchers of one run.
type watchers struct {
	ws   []*watcher
	done sync.WaitGroup
}

// refused counts the watchers whose watch was not established.
func (s *watchers) refused() int {
	n := 0
	for _, w := range s.ws {
		if w.refused.Load() {
			n++
		}
	}
	return n
}

// reasons is the errors that refused or ended watchers, most frequent
// first, each with its count (at most three).
func (s *watchers) reasons() string {
	count := map[string]int{}
	for _, w := range s.ws {
		if err, ok := w.err.Load().(error); ok {
			msg := err.Error()
			if len(msg) > 120 {
				msg = msg[:120] + "…"
			}
			count[msg]++
		}
	}
	msgs := slices.Collect(maps.Keys(count))
	slices.SortFunc(msgs, func(a, b string) int { return cmp.Or(count[b]-count[a], strings.Compare(a, b)) })
	var out []string
	for _, m := range msgs[:min(3, len(msgs))] {
		out = append(out, fmt.Sprintf("%d× %s", count[m], m))
	}
	return strings.Join(out, "; ")
}

// lost counts the watchers whose established watch ended while the run
// still wanted it (the server closed it, or sent an error).
func (s *watchers) lost() int {
	n := 0
	for _, w := range s.ws {
		if w.ended.Load() {
			n++
		}
	}
	return n
}

// delivered is the number of events the watchers received, and whether
// every watcher either got want events or is refused or lost.
func (s *watchers) delivered(want int64) (int64, bool) {
	var got int64
	settled := true
	for _, w := range s.ws {
		n := w.events.Load()
		got += n
		if n < want && !w.refused.Load() && !w.ended.Load() {
			settled = false
		}
	}
	return got, settled
}

// await waits, polling every poll for up to deliverBudget, until every
// watcher still watching received want events, and returns the events
// delivered and whether they all did.
func (s *watchers) await(want int64, poll time.Duration) (int64, bool) {
	for deadline := time.Now().Add(deliverBudget); ; {
		got, settled := s.delivered(want)
		if settled || time.Now().After(deadline) {
			return got, settled
		}
		time.Sleep(poll) // polling counters
	}
}

// wait waits for the watchers to stop (up to stopBudget) and returns how
// many did not.
func (s *watchers) wait() int {
	stopped := make(chan struct{})
	go func() {
		s.done.Wait()
		close(stopped)
	}()
	select {
	case <-stopped:
		return 0
	case <-time.After(stopBudget):
		n := 0
		for _, w := range s.ws {
			if !w.stopped.Load() {
				n++
			}
		}
		return n
	}
}

// openWatchers opens w watches of ns from rv over proto, spread over one
// client per 100 watches, at most openConcurrency being opened at once,
// and returns once each is established or refused (every open has a
// deadline: openTimeout each, openBudget in all).
func openWatchers(b *testing.B, ctx context.Context, srv *running, ns, rv string, w int, proto protocol, lat *latencies) *watchers {
	b.Helper()
	s := &watchers{ws: make([]*watcher, w)}
	var open sync.WaitGroup
	budget := time.Now().Add(openBudget)
	sem := make(chan struct{}, openConcurrency)
	var rc = srv.clientFor(b, proto)
	for i := range s.ws {
		if i > 0 && i%100 == 0 {
			rc = srv.clientFor(b, proto)
		}
		x := &watcher{}
		x.lastRV.Store(rv)
		s.ws[i] = x
		open.Add(1)
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			defer x.stopped.Store(true)
			select {
			case sem <- struct{}{}:
			case <-time.After(time.Until(budget)):
				x.refuse(fmt.Errorf("not opened within %v", openBudget))
				open.Done()
				return
			}
			by := time.Now().Add(openTimeout)
			if by.After(budget) {
				by = budget
			}
			x.run(ctx, rc, ns, rv, lat, by, func() {
				<-sem
				open.Done()
			})
		}()
	}
	open.Wait()
	return s
}

// fanOut opens w watchers of the fan namespace over proto and patches the
// fan widgets for the configured duration: as fast as one writer can
// (pace 0), or one write every pace (or as soon as the previous returned,
// if it took longer), so that the latencies are those of one write
// reaching all w watchers. It measures the delivery.
func fanOut(b *testing.B, srv *running, w int, proto protocol, pace time.Duration) fanResult {
	b.Helper()
	res := fanResult{Watchers: w, Protocol: proto, Pace: pace}
	// The clients' goroutines (the writer, and the watchers and their
	// connections' loops unless -apiserver.watchproc runs them elsewhere;
	// all started from here) carry the label bench=client, so that the
	// row's CPU profile splits the process's CPU into the clients' and the
	// rest (server and etcd; ClientShare), as go tool pprof -tags, or
	// -tagignore bench=client, does on a profile -apiserver.cpuprofile
	// wrote.
	pprof.SetGoroutineLabels(pprof.WithLabels(context.Background(), pprof.Labels("bench", "client")))
	defer pprof.SetGoroutineLabels(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc := srv.client(b)
	opening := time.Now()
	ws, op := openFan(b, ctx, srv, currentRV(b, rc, "fan"), w, proto)
	fmt.Fprintf(os.Stderr, "bench: %s, %s, %d watchers, pace %s: %d opened (%d refused) over %d connections in %.1f s\n",
		srv.kind, proto, w, paceString(pace), w-op.Refused, op.Refused, op.Dials, time.Since(opening).Seconds())
	res.Connections, res.Refused = op.Dials, op.Refused
	// The watch responses came over the protocol asked for.
	opened := int64(w - res.Refused)
	if proto == protoH1 && (op.H2 > 0 || op.H1 < opened) || proto == protoH2 && (op.H1 > 0 || op.H2 < opened) {
		b.Fatalf("%s watchers: %d HTTP/1.1 and %d HTTP/2 responses", proto, op.H1, op.H2)
	}
	stopProfile := startProfile(b, srv.kind, proto, w, pace)
	write := func() error {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, sentAnno, time.Now().UnixNano())
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		defer wcancel()
		_, err := rc.Patch(types.MergePatchType).AbsPath(fmt.Sprintf(widgetsPath, "fan") + fmt.Sprintf("/w-%06d", res.Writes%fanObjects)).
			Body([]byte(patch)).DoRaw(wctx)
		if err != nil {
			return fmt.Errorf("the writer stopped after %d writes: %w", res.Writes, err)
		}
		res.Writes++
		return nil
	}
	var sp span
	var settled bool
	var reach []time.Duration
	start, cpu0, machine0 := time.Now(), processCPU(b), machineCPU()
	var writing time.Duration
	if pace == 0 {
		// As fast as one writer can; then the watchers still watching
		// receive what was written.
		sp.begin(b)
		for time.Since(start) < *flagDuration {
			if err := write(); err != nil {
				res.Note = err.Error()
				break
			}
		}
		writing = time.Since(start)
		res.Delivered, settled = ws.await(int64(res.Writes), 20*time.Millisecond)
		sp.end(b)
	} else {
		// One write per pace, each measured from its sending until every
		// watcher still watching received it; the CPU is counted over
		// those spans only.
		settled = true
		for next := start; ; next = next.Add(pace) {
			if d := time.Until(next); d > 0 {
				time.Sleep(d) // pacing the writer
			}
			if time.Since(start) >= *flagDuration {
				break
			}
			if now := time.Now(); next.Before(now) {
				next = now // a late write moves the schedule
			}
			sp.begin(b)
			sent := time.Now()
			if err := write(); err != nil {
				sp.end(b)
				res.Note = err.Error()
				break
			}
			res.Delivered, settled = ws.await(int64(res.Writes), time.Millisecond)
			sp.end(b)
			if !settled {
				break
			}
			reach = append(reach, time.Since(sent))
		}
		writing = time.Since(start)
	}
	deliveredIn := time.Since(start)
	res.Wants = int64(res.Writes) * int64(w)
	machine, cpu := machineCPU(), processCPU(b)-cpu0
	res.ClientShare = stopProfile()
	rep := ws.stop()
	res.Lost = rep.Lost
	if res.Refused > 0 || res.Lost > 0 {
		res.Note = strings.TrimPrefix(res.Note+"; refused or lost: "+rep.Reasons, "; ")
	}
	if !settled {
		res.Note = strings.TrimPrefix(res.Note+fmt.Sprintf("; watchers still short of %d events %v after write %d", res.Writes, deliverBudget, res.Writes), "; ")
	}
	if rep.NotStopped > 0 {
		res.Note = strings.TrimPrefix(res.Note+fmt.Sprintf("; %d watchers did not stop within %v", rep.NotStopped, stopBudget), "; ")
	}
	// The other processes' CPU over the whole run (/proc/stat counts in
	// 10 ms ticks, too coarse for a paced write's span), less the watch
	// process's (-apiserver.watchproc), scaled to the measured spans so
	// that Others/Elapsed is their cores.
	res.Others = -1
	if machine0 >= 0 && machine >= 0 {
		others := max(0, machine-machine0-cpu-rep.CPU)
		res.Others = time.Duration(float64(others) * sp.wall.Seconds() / deliveredIn.Seconds())
	}
	res.WritesPerSec = float64(res.Writes) / writing.Seconds()
	res.EventsPerSec = float64(res.Delivered) / deliveredIn.Seconds()
	res.P50, res.P99, res.Max = rep.P50, rep.P99, rep.Max
	if len(reach) > 0 {
		slices.Sort(reach)
		res.ReachP50, res.ReachP99 = reach[len(reach)/2], reach[int(0.99*float64(len(reach)-1))]
	}
	res.CPU, res.Elapsed = sp.cpu, sp.wall
	return res
}

// span accumulates the process's CPU time and the wall time over the
// measured spans of a run.
type span struct {
	cpu, wall time.Duration
	cpu0      time.Duration
	start     time.Time
}

func (s *span) begin(b *testing.B) { s.start, s.cpu0 = time.Now(), processCPU(b) }

func (s *span) end(b *testing.B) {
	s.cpu += processCPU(b) - s.cpu0
	s.wall += time.Since(s.start)
}
