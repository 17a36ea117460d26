package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

// resumeBudget bounds how long a watcher tries to resume after the restart
// (from the moment the restarted server is started).
const resumeBudget = 60 * time.Second

// The reflector's watch backoff (client-go's NewReflector: 800 ms doubling
// up to 30 s, with a jitter of up to 100%).
const (
	backoffInitial = 800 * time.Millisecond
	backoffMax     = 30 * time.Second
)

// resumeReason is how a watcher settled after the restart.
type resumeReason string

const (
	// reasonResumed: the watch delivered the change written after the restart.
	reasonResumed resumeReason = "resumed"
	// reasonGone: the server said 410 Gone (at open or in the stream); the
	// reflector relists.
	reasonGone resumeReason = "410"
	// reasonError: an error the reflector does not retry (it relists).
	reasonError resumeReason = "error"
	// reasonSilent: neither the change nor an error within the budget.
	reasonSilent resumeReason = "silent"
)

// resumeOutcome is one watcher's story after the restart.
type resumeOutcome struct {
	Reason resumeReason
	// After is the time from the restarted server's start to the first
	// event (reasonResumed).
	After time.Duration
	// Attempts is how many watch requests the watcher sent (the REST
	// client's own Retry-After retries included).
	Attempts int
	// Refusals counts the non-2xx answers and stream errors seen, by
	// "code reason" (e.g. "429 TooManyRequests").
	Refusals map[string]int
	// Last is the error that settled it (reasonGone, reasonError), or what
	// it was doing when the budget ran out (reasonSilent).
	Last string
}

// resumeSummary aggregates the outcomes of one restart run.
type resumeSummary struct {
	Watchers int
	// ByReason counts the watchers per reason.
	ByReason map[resumeReason]int
	// Retried is how many resumed watchers needed more than one request.
	Retried int
	// Ready is the time from the server's start until it answered /readyz.
	Ready time.Duration
	// FirstP50, FirstMax: time from the server's start to a resumed
	// watcher's first event.
	FirstP50, FirstMax time.Duration
	// Refusals sums the watchers' refusals, by "code reason".
	Refusals map[string]int
	// Last counts the settling errors of the watchers that did not resume.
	Last map[string]int
}

// relists is how many watchers a client-go reflector would have relisted.
func (s resumeSummary) relists() int { return s.ByReason[reasonGone] + s.ByReason[reasonError] }

// first is a first-event time of s, "-" when no watcher resumed.
func first(s resumeSummary, d time.Duration) string {
	if s.ByReason[reasonResumed] == 0 {
		return "-"
	}
	return secs(d)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// summarize aggregates outcomes.
func summarize(outs []resumeOutcome, ready time.Duration) resumeSummary {
	s := resumeSummary{Watchers: len(outs), Ready: ready, ByReason: map[resumeReason]int{},
		Refusals: map[string]int{}, Last: map[string]int{}}
	var firsts []time.Duration
	for _, o := range outs {
		s.ByReason[o.Reason]++
		for k, n := range o.Refusals {
			s.Refusals[k] += n
		}
		if o.Reason == reasonResumed {
			firsts = append(firsts, o.After)
			if o.Attempts > 1 {
				s.Retried++
			}
		} else {
			s.Last[string(o.Reason)+": "+o.Last]++
		}
	}
	if len(firsts) > 0 {
		slices.Sort(firsts)
		s.FirstP50, s.FirstMax = firsts[len(firsts)/2], firsts[len(firsts)-1]
	}
	return s
}

// attemptLog records, per watcher, the HTTP answers to its watch requests,
// including those the REST client retries by itself (it honours
// Retry-After on 429 and 5xx up to 10 times before returning the error).
type attemptLog struct {
	mu       sync.Mutex
	attempts int
	refusals map[string]int
}

type attemptLogKey struct{}

func (l *attemptLog) refused(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refusals == nil {
		l.refusals = map[string]int{}
	}
	l.refusals[what]++
}

// countingTransport counts the watch requests and their non-2xx answers
// in the attemptLog their context carries.
type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	l, _ := req.Context().Value(attemptLogKey{}).(*attemptLog)
	resp, err := t.next.RoundTrip(req)
	if l == nil {
		return resp, err
	}
	l.mu.Lock()
	l.attempts++
	l.mu.Unlock()
	switch {
	case err != nil:
		if req.Context().Err() == nil { // not the run's end
			l.refused("transport error")
		}
	case resp.StatusCode >= 300:
		what := fmt.Sprintf("%d", resp.StatusCode)
		if resp.Header.Get("Retry-After") == "" {
			what += " (no Retry-After)"
		}
		l.refused(what)
	}
	return resp, err
}

// resumer resumes one watch after the restart as client-go's reflector
// does: it re-watches from the last RV it saw, backing off after 429 and
// "connection refused" (isWatchErrorRetriable and the 429 case of
// Reflector.watch), re-watches at once after a stream that just closed,
// and relists (settles) on 410 and on any other error.
type resumer struct {
	rc      *rest.RESTClient
	ns      string
	rv      string
	started time.Time // the restarted server's start

	settled atomic.Bool
	out     resumeOutcome
	log     attemptLog
	state   atomic.Value // string: what it is doing now
}

// run resumes until settled or ctx ends (reasonSilent).
func (r *resumer) run(ctx context.Context) {
	ctx = context.WithValue(ctx, attemptLogKey{}, &r.log)
	backoff := backoffInitial
	wait := func(why string) bool {
		d := backoff + time.Duration(rand.Int64N(int64(backoff)))
		backoff = min(2*backoff, backoffMax)
		r.state.Store("backing off after " + why)
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	defer r.finish()
	for ctx.Err() == nil {
		r.state.Store("opening the watch")
		opened := time.Now()
		stream, err := r.rc.Get().AbsPath(fmt.Sprintf(widgetsPath, r.ns)).Param("watch", "1").
			Param("resourceVersion", r.rv).Param("allowWatchBookmarks", "true").Stream(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			what := describeErr(err)
			switch {
			case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
				r.settle(reasonGone, what)
				return
			case apierrors.IsTooManyRequests(err) || utilnet.IsConnectionRefused(err):
				if !wait(what) {
					return
				}
				continue
			}
			r.settle(reasonError, what)
			return
		}
		r.state.Store("watching, no event yet")
		st, lines := r.read(ctx, stream)
		stream.Close()
		switch {
		case r.settled.Load() || ctx.Err() != nil:
			return
		case st == nil && lines == 0 && time.Since(opened) < time.Second:
			// The reflector's handleWatch calls this a "very short
			// watch", an error it relists after.
			r.settle(reasonError, "very short watch (closed within 1 s, no event)")
			return
		case st == nil:
			r.log.refused("stream closed")
			continue // the reflector re-watches at once
		case st.Code == http.StatusGone || st.Reason == metav1.StatusReasonExpired:
			r.settle(reasonGone, statusString(st))
			return
		case st.Code == http.StatusTooManyRequests:
			r.log.refused(statusString(st) + " in stream")
			if !wait(statusString(st)) {
				return
			}
			continue
		}
		r.settle(reasonError, statusString(st)+" in stream")
		return
	}
}

// read reads the stream, settling the watcher at its first event, until
// an error event (returned), the stream's end or ctx's (nil); lines is how
// many events (bookmarks included) it read. Bookmarks move the RV
// a retry resumes from, as the reflector's last sync RV.
func (r *resumer) read(ctx context.Context, stream io.Reader) (_ *metav1.Status, lines int) {
	br := bufio.NewReaderSize(stream, 64<<10)
	for ctx.Err() == nil {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return nil, lines
		}
		lines++
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := json.Unmarshal(line, &ev); err != nil {
			return &metav1.Status{Reason: "UndecodableEvent", Message: err.Error()}, lines
		}
		switch ev.Type {
		case "ERROR":
			var st metav1.Status
			if err := json.Unmarshal(ev.Object, &st); err != nil {
				return &metav1.Status{Reason: "UndecodableError", Message: err.Error()}, lines
			}
			return &st, lines
		case "BOOKMARK":
			var obj struct {
				Metadata metav1.ObjectMeta `json:"metadata"`
			}
			if json.Unmarshal(ev.Object, &obj) == nil && obj.Metadata.ResourceVersion != "" {
				r.rv = obj.Metadata.ResourceVersion
			}
			continue
		}
		// Resumed; the watch stays open, as a reflector's does, until the
		// run ends.
		r.settle(reasonResumed, "")
	}
	return nil, lines
}

// settle records the outcome once.
func (r *resumer) settle(reason resumeReason, last string) {
	if r.settled.Load() {
		return
	}
	r.out.Reason, r.out.Last = reason, last
	if reason == reasonResumed {
		r.out.After = time.Since(r.started)
	}
	r.settled.Store(true)
}

// finish fills in the attempts, and what an unsettled watcher was doing.
func (r *resumer) finish() {
	if !r.settled.Load() {
		r.out.Reason = reasonSilent
		r.out.Last, _ = r.state.Load().(string)
		r.settled.Store(true)
	}
	r.log.mu.Lock()
	r.out.Attempts, r.out.Refusals = r.log.attempts, r.log.refusals
	r.log.mu.Unlock()
}

// describeErr is "code reason: message" for a status error, the error
// otherwise.
func describeErr(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		s := st.Status()
		return statusString(&s)
	}
	if utilnet.IsConnectionRefused(err) {
		return "connection refused"
	}
	return err.Error()
}

func statusString(st *metav1.Status) string {
	msg := st.Message
	if len(msg) > 80 {
		msg = msg[:80] + "…"
	}
	return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, msg)
}

// resumeClient is srv's client whose transport counts watch requests.
func resumeClient(b *testing.B, srv *running) *rest.RESTClient {
	b.Helper()
	return srv.clientWith(b, protoH2, func(rt http.RoundTripper) http.RoundTripper { return countingTransport{next: rt} })
}

// restartResume keeps n watchers of the fan namespace open, restarts the
// server while etcd moves on (writes elsewhere while no server runs), lets
// each watcher resume from the last resourceVersion it saw as a client-go
// reflector would, writes one change to the fan namespace and returns how
// each watcher settled.
func restartResume(b *testing.B, srv **running, kind server.Storage, endpoints []string, n int, write func(ns string, k int)) resumeSummary {
	b.Helper()
	lat := &latencies{}
	ctx, cancel := context.WithCancel(context.Background())
	rc := (*srv).client(b)
	ws := openWatchers(b, ctx, *srv, "fan", currentRV(b, rc, "fan"), n, protoH2, lat)
	if k := ws.refused(); k > 0 {
		b.Fatalf("%d of %d watchers refused before the restart", k, n)
	}
	// The clients disconnect (a server's graceful shutdown waits for open
	// watches), the server stops, etcd moves on.
	cancel()
	if k := ws.wait(); k > 0 {
		b.Fatalf("%d watchers did not stop within %v", k, stopBudget)
	}
	(*srv).stop()
	write("elsewhere", 1000)
	started := time.Now()
	*srv = startServer(b, kind, endpoints)
	ready := time.Since(started)
	ctx, cancel = context.WithDeadline(context.Background(), started.Add(resumeBudget))
	defer cancel()
	var wg sync.WaitGroup
	rs := make([]*resumer, len(ws.ws))
	for i, w := range ws.ws {
		if i%100 == 0 {
			rc = resumeClient(b, *srv)
		}
		rs[i] = &resumer{rc: rc, ns: "fan", rv: w.lastRV.Load().(string), started: started}
		wg.Add(1)
		go func(r *resumer) {
			defer wg.Done()
			r.run(ctx)
		}(rs[i])
	}
	// One change to the fan namespace: every resumed watcher gets it.
	rc = (*srv).client(b)
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, sentAnno, time.Now().UnixNano())
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	_, err := rc.Patch(types.MergePatchType).AbsPath(fmt.Sprintf(widgetsPath, "fan") + "/w-000000").Body([]byte(patch)).DoRaw(wctx)
	wcancel()
	if err != nil {
		b.Fatal(err)
	}
	for ctx.Err() == nil {
		settled := 0
		for _, r := range rs {
			if r.settled.Load() {
				settled++
			}
		}
		if settled == len(rs) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling flags
	}
	cancel()
	wg.Wait()
	outs := make([]resumeOutcome, len(rs))
	for i, r := range rs {
		outs[i] = r.out
	}
	return summarize(outs, ready)
}

// printResume prints how the watchers settled after the restart, per
// storage, and the errors that settled those that did not resume.
func printResume(w io.Writer, results []result) {
	fmt.Fprintf(w, "\nresume after a restart (each watcher as a client-go reflector: 429 and connection refused are retried with backoff, 410 and other errors relist; %v budget)\n", resumeBudget)
	fmt.Fprintf(w, "| storage | watchers | resumed | resumed after a retry | 410 | other error | silent | server ready after | first event p50 | first event max | refused requests |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		s := r.Resume
		if s.Watchers == 0 {
			continue
		}
		var refused []string
		for _, k := range slices.Sorted(maps.Keys(s.Refusals)) {
			refused = append(refused, fmt.Sprintf("%s ×%d", k, s.Refusals[k]))
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s |\n", r.Kind, s.Watchers, s.ByReason[reasonResumed], s.Retried,
			s.ByReason[reasonGone], s.ByReason[reasonError], s.ByReason[reasonSilent], secs(s.Ready), first(s, s.FirstP50), first(s, s.FirstMax),
			strings.Join(refused, ", "))
	}
	for _, r := range results {
		for _, k := range slices.Sorted(maps.Keys(r.Resume.Last)) {
			fmt.Fprintf(w, "%s: %d watchers settled on %s\n", r.Kind, r.Resume.Last[k], k)
		}
	}
}
