package httplw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/watch"
)

// streamWatcher decodes a watch stream of JSON {"type","object"} frames.
type streamWatcher struct {
	// result carries decoded events; closed by run when it returns.
	result chan watch.Event
	// cancel ends the request's context, which aborts body reads.
	cancel context.CancelFunc
	// done is closed when run has returned.
	done chan struct{}
}

// frame is one event on the wire.
type frame struct {
	Type   watch.EventType `json:"type"`
	Object json.RawMessage `json:"object"`
}

func newStreamWatcher(ctx context.Context, cancel context.CancelFunc, body io.ReadCloser,
	decode func([]byte) (runtime.Object, error)) *streamWatcher {
	w := &streamWatcher{result: make(chan watch.Event), cancel: cancel, done: make(chan struct{})}
	go w.run(ctx, body, decode)
	return w
}

// ResultChan implements watch.Interface. The channel is closed after the
// stream ends; a stream that ends with a decoding failure first delivers a
// watch.Error event with a 500 Status.
func (w *streamWatcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it ends the request and waits until the
// decoding goroutine has closed the body and the result channel. It may be
// called more than once and from any goroutine.
func (w *streamWatcher) Stop() {
	w.cancel()
	<-w.done
}

func (w *streamWatcher) run(ctx context.Context, body io.ReadCloser, decode func([]byte) (runtime.Object, error)) {
	defer close(w.done)
	defer close(w.result)
	defer body.Close()
	defer w.cancel()
	frames := newFrameReader(body)
	for {
		ev, err := frames.nextEvent(decode)
		if err != nil {
			if ctx.Err() == nil && !isStreamEnd(err) {
				w.send(ctx, decodeFailure(fmt.Errorf("unable to decode an event from the watch stream: %w", err)))
			}
			return
		}
		if !w.send(ctx, ev) {
			return
		}
	}
}

func (w *streamWatcher) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.result <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// toEvent converts a frame; ERROR frames carry a *metav1.Status.
func toEvent(f rawFrame, decode func([]byte) (runtime.Object, error)) (watch.Event, error) {
	switch f.typ {
	case watch.Added, watch.Modified, watch.Deleted, watch.Bookmark:
		obj, err := decode(f.object)
		if err != nil {
			return watch.Event{}, fmt.Errorf("decoding %s event object: %w", f.typ, err)
		}
		return watch.Event{Type: f.typ, Object: obj}, nil
	case watch.Error:
		st := &metav1.Status{}
		if err := utiljson.Unmarshal(f.object, st); err != nil {
			return watch.Event{}, fmt.Errorf("decoding ERROR event status: %w", err)
		}
		return watch.Event{Type: watch.Error, Object: st}, nil
	}
	return watch.Event{}, fmt.Errorf("invalid watch event type %q", f.typ)
}

func decodeFailure(err error) watch.Event {
	st := apierrors.NewInternalError(err).ErrStatus
	return watch.Event{Type: watch.Error, Object: &st}
}

// isStreamEnd reports errors that mean the connection ended rather than
// that the stream was malformed: the client then simply re-watches.
func isStreamEnd(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, context.Canceled) ||
		(errors.As(err, &ne) && ne.Timeout())
}
