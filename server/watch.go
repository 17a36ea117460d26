package server

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/storage"
)

// maxBatchLines is the most events a watch writes before it flushes,
// so that a steady stream still reaches its client in bounded batches.
const maxBatchLines = 256

// serveWatch streams the events of t's collection.
//
// A watch costs one goroutine, the request's: it takes the events of the
// storage watch, encodes them (sharing each event's line with the other
// watchers of the change, see wire.EventEncoder) and writes them; it writes
// every event already waiting, then flushes once, so a burst goes out in
// few writes while a lone event is flushed at once. While it writes, the
// events that follow wait in the storage watch: lag is the storage's to
// absorb (the cacher serves a lagging watcher from its history), and the
// server adds no buffer of its own. The one slow-client policy is
// Config.SlowWatcherTimeout: a client that takes nothing for that long
// while a write waits for it (see watchdog) ends the stream without an
// ERROR event; the client resumes from the last RV it decoded, so nothing
// is lost.
//
// Config.MaxWatches and MaxWatchesPerUser bound the watches open at once
// (429 past them).
//
// The stream also ends, cleanly, at timeoutSeconds (capped by
// MaxWatchTimeout; a random time between half of it and all of it when
// the client gives none), when the client goes away, when the storage
// watch ends (after its ERROR event, if any), and when the Server is
// closed.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, t target, p *request.ListParams) {
	select {
	case <-s.closing:
		s.writeError(w, req, apierrors.NewServiceUnavailable("the server is shutting down"))
		return
	default:
	}
	release, err := s.watches.Acquire(auth.UserFrom(req.Context()).Name)
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	defer release()
	if err := t.res.Storage.ReadinessCheck(); err != nil {
		s.writeError(w, req, err)
		return
	}
	encode, err := s.tableWatchEncoder(req, t.res) // nil unless a Table is asked for
	if err != nil {
		s.writeError(w, req, err)
		return
	}
	timeout := watchTimeout(p.Timeout, s.cfg.MaxWatchTimeout)
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	defer cancel()
	// No ProgressNotify: a client's allowWatchBookmarks asks for the
	// storage's periodic bookmarks (the cacher's, about one a minute, see
	// cacher.Config.BookmarkInterval), not for one per etcd progress
	// notification, which the cacher receives every second.
	opts := p.Options
	src, err := startWatch(ctx, t, opts, encode == nil)
	if err != nil {
		if !isGone(err) {
			s.writeError(w, req, err)
			return
		}
		// As Kubernetes does: a too-old RV is a 200 stream whose only event
		// is an ERROR carrying the 410 Expired status.
		rc := startStream(w)
		_, _ = w.Write(errorLine(err, t.res))
		_ = rc.Flush()
		return
	}
	s.activeWatches.Add(1)
	defer s.activeWatches.Add(-1)
	rc := startStream(w) // no write deadline is set unless the watchdog ends the watch
	if encode != nil {
		s.pumpEncoded(ctx, w, rc, src, t.res, encode)
		return
	}
	s.pump(ctx, w, rc, src, t.res)
}

// startWatch starts the storage watch of t's collection; shared asks for
// events whose encodings the store shares between watchers
// (storage.EncodedWatcher), for the server's own JSON lines.
func startWatch(ctx context.Context, t target, opts storage.ListOptions, shared bool) (watch.Interface, error) {
	if ew, ok := t.res.Storage.(storage.EncodedWatcher); ok && shared {
		return ew.WatchEncoded(ctx, t.collectionKey(), opts)
	}
	return t.res.Storage.Watch(ctx, t.collectionKey(), opts)
}

// watchTimeout is how long a watch lasts: the requested timeoutSeconds
// capped at limit or, when none was requested, a random duration in
// [limit/2, limit) so that clients' reconnections spread out.
func watchTimeout(requested, limit time.Duration) time.Duration {
	if requested > 0 {
		return min(requested, limit)
	}
	return limit/2 + rand.N(limit/2+1)
}

// isGone reports a 410 from the storage, whichever vocabulary it speaks
// (a *storage.Error, or a Status): its Status is read back as a
// *storage.Error and tested with errors.Is.
func isGone(err error) bool {
	st := storage.StatusOf(err)
	return errors.Is(storage.FromStatus(&st), storage.ErrGone)
}

// startStream writes the headers of a watch stream and flushes them, so
// the client sees the watch established before the first event.
func startStream(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	return rc
}

// pump writes the events of src as the server's JSON lines until the
// stream ends.
func (s *Server) pump(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, src watch.Interface, r *resource) {
	s.pumpEncoded(ctx, w, rc, src, r, func(ev watch.Event) ([]byte, error) { return s.enc.Line(ev, r.wire) })
}

// pumpEncoded is pump with the events encoded by encode. It runs on the
// request's goroutine and stops src when it returns.
func (s *Server) pumpEncoded(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, src watch.Interface,
	r *resource, encode func(watch.Event) ([]byte, error)) {
	defer src.Stop()
	events := src.ResultChan()
	wd := &watchdog{timeout: s.cfg.SlowWatcherTimeout, rc: rc, clock: s.clock}
	defer wd.stop()
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-events:
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		}
		more, err := s.writeBatch(w, rc, wd, events, ev, ok, r, encode)
		if err != nil {
			if wd.stop() || errors.Is(err, os.ErrDeadlineExceeded) {
				s.endSlowWatch(r)
			} else {
				s.log.Debug("watch ended: its client went away", "resource", r.Plural, "err", err)
			}
			return
		}
		if !more {
			return
		}
	}
}

// writeBatch writes ev (ok false: src ended) and every event already
// waiting in events, up to maxBatchLines, then flushes. more is false when
// the stream is over: src ended or an ERROR event was written.
func (s *Server) writeBatch(w http.ResponseWriter, rc *http.ResponseController, wd *watchdog, events <-chan watch.Event,
	ev watch.Event, ok bool, r *resource, encode func(watch.Event) ([]byte, error)) (more bool, err error) {
	more = true
	for n := 0; ; n++ {
		if !ok {
			more = false
			break
		}
		line, err := encode(ev)
		if err != nil {
			// The client is told the server failed; the cause (the
			// encoder's words) is for the log.
			s.log.Error("watch event cannot be encoded", "resource", r.Plural, "err", err)
			line, ev.Type = errorLine(err, r), watch.Error
		}
		wd.arm()
		if _, err := w.Write(line); err != nil {
			return false, err
		}
		if ev.Type == watch.Error {
			more = false
			break
		}
		if n+1 == maxBatchLines {
			break
		}
		select {
		case ev, ok = <-events:
			continue
		default:
		}
		break
	}
	wd.arm()
	err = rc.Flush()
	wd.disarm()
	return more, err
}

// endSlowWatch logs and counts a watch ended by the slow-client policy.
func (s *Server) endSlowWatch(r *resource) {
	s.log.Info("ending slow watch: its client took nothing for SlowWatcherTimeout while events waited",
		"resource", r.Plural, "timeout", s.cfg.SlowWatcherTimeout)
	s.metrics.terminatedWatch(r.Plural)
}

// deadline keeps a connection's write deadline between 0.9 and 1 times
// timeout ahead of every write, moving it at most every timeout/10 (moving
// it costs a timer update per call).
type deadline struct {
	timeout time.Duration
	next    time.Time // when to move it again
}

func (d *deadline) extend(rc *http.ResponseController) {
	now := time.Now()
	if now.Before(d.next) {
		return
	}
	_ = rc.SetWriteDeadline(now.Add(d.timeout))
	d.next = now.Add(d.timeout / 10)
}

// errorLine encodes an ERROR event carrying the status of err.
func errorLine(err error, r *resource) []byte {
	st := statusFor(err)
	b, _ := r.wire.EncodeEvent(watch.Event{Type: watch.Error, Object: &st})
	return b
}

// watchdog ends a watch whose client takes nothing for timeout
// (SlowWatcherTimeout) while a write waits for it. It is armed while the
// watch writes, moved on as lines are taken (at most every timeout/10),
// and disarmed once a batch is flushed; when it fires it sets the
// connection's write deadline in the past, which fails the write that
// waits (over HTTP/2, resets the stream). No write deadline is set
// otherwise: writing an event costs two timer updates, not a message to
// an HTTP/2 connection's goroutine per deadline, and an idle watch has no
// deadline that could fire (an HTTP/2 deadline resets its stream when it
// passes, written to or not).
type watchdog struct {
	timeout time.Duration
	rc      *http.ResponseController
	clock   clock.WithDelayedExecution // times the timeout (the Server's)
	next    time.Time                  // when to move it on again; zero while disarmed
	timer   clock.Timer                // nil until the first write

	mu    sync.Mutex
	fired bool // guarded by mu
	done  bool // guarded by mu: the watch has ended, rc is no longer its
}

// arm starts the timeout, or moves it on unless it moved within
// timeout/10.
func (d *watchdog) arm() {
	now := d.clock.Now()
	if now.Before(d.next) {
		return
	}
	d.next = now.Add(d.timeout / 10)
	if d.timer == nil {
		d.timer = d.clock.AfterFunc(d.timeout, d.fire)
		return
	}
	d.timer.Reset(d.timeout)
}

// disarm stops the timeout: nothing waits for the client.
func (d *watchdog) disarm() {
	if d.timer != nil {
		d.timer.Stop()
	}
	d.next = time.Time{}
}

func (d *watchdog) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.fired = true
	// A connection's deadline is on the wall clock, whatever times d.
	_ = d.rc.SetWriteDeadline(time.Now().Add(-time.Second))
}

// stop ends the watchdog for good, before the request's response is
// finished, and reports whether it fired.
func (d *watchdog) stop() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	if d.timer != nil {
		d.timer.Stop()
	}
	return d.fired
}
