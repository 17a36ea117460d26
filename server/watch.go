package server

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// watchQueueLines is how many encoded events an HTTP watch holds between
// its storage watch and its connection. Lag beyond it is the storage's to
// absorb (the cacher serves a lagging watcher from its history); a client
// that takes nothing while it is full meets Config.SlowWatcherTimeout.
const watchQueueLines = 1024

// serveWatch streams the events of t's collection.
//
// Each watch has two goroutines: the request's, which writes encoded
// events to the connection, and a reader that takes events from the
// storage watch, encodes them (sharing each event's line with the other
// watchers of the change, see eventEncoder) and queues the bytes in a
// wire.LineQueue of at most watchQueueLines events. The one slow-client
// policy is Config.SlowWatcherTimeout: when the client takes nothing for
// that long while events wait for it (the queue stays full, or a write to
// the connection blocks), the reader stops the storage watch and the
// stream ends without an ERROR event: the client resumes from the last RV
// it decoded, so nothing is lost and the connection never holds more than
// watchQueueLines events. Events are flushed as soon as no further event
// is already queued, so a burst goes out in few writes while a lone event
// is flushed at once.
//
// The stream also ends, cleanly, at timeoutSeconds (capped by
// MaxWatchTimeout; a random time between half of it and all of it when
// the client gives none), when the client goes away, when the storage watch ends
// (after its ERROR event, if any), and when the Server is closed.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, t target, p *request.ListParams) {
	select {
	case <-s.closing:
		s.writeError(w, req, apierrors.NewServiceUnavailable("the server is shutting down"))
		return
	default:
	}
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
	rc := startStream(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
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

// pump runs the reader goroutine and writes what it queues until the
// stream ends; it returns after the reader has returned.
func (s *Server) pump(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, src watch.Interface, r *resource) {
	s.pumpEncoded(ctx, w, rc, src, r, func(ev watch.Event) ([]byte, error) { return s.enc.line(ev, r) })
}

// pumpEncoded is pump with the events encoded by encode.
func (s *Server) pumpEncoded(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, src watch.Interface,
	r *resource, encode func(watch.Event) ([]byte, error)) {
	queueLines := cmp.Or(s.watchQueue, watchQueueLines)
	queue := wire.NewLineQueue(queueLines)
	done := make(chan struct{})
	readerDone := make(chan struct{})
	progress := make(chan struct{}, 1) // a token after each line the client took
	var overflow atomic.Bool
	stop := sync.OnceFunc(src.Stop)
	go func() {
		defer close(readerDone)
		defer queue.Close()
		if s.readEvents(src, r, encode, queue, progress, done) {
			overflow.Store(true)
			stop() // release the storage watch now, not when the connection gives up
			s.endSlowWatch(r, "its queue of "+strconv.Itoa(queueLines)+" events stayed full")
		}
	}()
	defer func() {
		close(done)
		stop()
		<-readerDone
	}()
	dl := &deadline{timeout: s.cfg.SlowWatcherTimeout}
	var batch [][]byte
	for {
		select {
		case <-queue.Ready():
			var closed bool
			batch, closed = queue.Take(batch)
			if overflow.Load() {
				return
			}
			if len(batch) > 0 {
				if err := writeLines(w, rc, dl, batch, progress); err != nil {
					if errors.Is(err, os.ErrDeadlineExceeded) {
						s.endSlowWatch(r, "a write to its connection blocked")
					}
					return // else the client went away
				}
			}
			clear(batch)
			if closed {
				return
			}
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		}
	}
}

// writeLines writes lines, then flushes, each write under dl
// (SlowWatcherTimeout from the previous one) and followed by a token in
// progress, so that a slow client that keeps reading a large batch is
// not ended.
func writeLines(w http.ResponseWriter, rc *http.ResponseController, dl *deadline, lines [][]byte, progress chan struct{}) error {
	for _, line := range lines {
		dl.extend(rc)
		if _, err := w.Write(line); err != nil {
			return err
		}
		select {
		case progress <- struct{}{}:
		default:
		}
	}
	return rc.Flush()
}

// endSlowWatch logs and counts a watch ended by the slow-client policy.
func (s *Server) endSlowWatch(r *resource, why string) {
	s.log.Info("ending slow watch: its client took nothing for SlowWatcherTimeout", "resource", r.Plural,
		"why", why, "timeout", s.cfg.SlowWatcherTimeout)
	s.metrics.terminatedWatch(r.Plural)
}

// readEvents moves events from src to queue until src ends or done is
// closed. It reports true when it gave up because queue stayed full while
// the writer took nothing (no token in progress) for SlowWatcherTimeout.
func (s *Server) readEvents(src watch.Interface, r *resource, encode func(watch.Event) ([]byte, error),
	queue *wire.LineQueue, progress <-chan struct{}, done <-chan struct{}) (overflowed bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var ev watch.Event
		select {
		case e, ok := <-src.ResultChan():
			if !ok {
				return false
			}
			ev = e
		case <-done:
			return false
		}
		line, err := encode(ev)
		if err != nil {
			s.log.Error("watch event cannot be encoded", "resource", r.Plural, "err", err)
			line, ev.Type = errorLine(apierrors.NewInternalError(err), r), watch.Error
		}
		if !queue.TryPush(line) {
			if timer == nil {
				timer = time.NewTimer(s.cfg.SlowWatcherTimeout)
			} else {
				timer.Reset(s.cfg.SlowWatcherTimeout)
			}
			select { // a token from before the queue filled is no news
			case <-progress:
			default:
			}
			for pushed := false; !pushed; {
				select {
				case <-queue.Freed():
					pushed = queue.TryPush(line)
				case <-progress:
					timer.Reset(s.cfg.SlowWatcherTimeout)
				case <-done:
					return false
				case <-timer.C:
					return true
				}
			}
			timer.Stop()
		}
		if ev.Type == watch.Error {
			return false
		}
	}
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
