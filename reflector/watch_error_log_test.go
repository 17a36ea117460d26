package reflector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
)

// syncBuffer is a log sink read while a reflector writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDefaultWatchErrorHandlerLevels: an expired RV is logged at Info, an
// ended connection at Debug, anything else at Warn.
func TestDefaultWatchErrorHandlerLevels(t *testing.T) {
	for _, tc := range []struct {
		err   error
		level string
	}{
		{apierrors.NewResourceExpired("too old resource version: 5 (9)"), "level=INFO"},
		{fmt.Errorf("watch: %w", io.EOF), "level=DEBUG"},
		{errors.New("etcd is unavailable at http://127.0.0.1:2379: connection refused"), "level=WARN"},
	} {
		var buf bytes.Buffer
		DefaultWatchErrorHandler(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), tc.err)
		if !strings.Contains(buf.String(), tc.level) || !strings.Contains(buf.String(), tc.err.Error()) {
			t.Errorf("%v logged %q, want %s", tc.err, buf.String(), tc.level)
		}
	}
}

// TestReflectorLogsListFailuresByDefault: without a WatchErrorHandler a
// failing list is logged at Warn on the reflector's Logger, with its name
// and the error.
func TestReflectorLogsListFailuresByDefault(t *testing.T) {
	logs := &syncBuffer{}
	lw := &ListWatchFuncs{
		ListFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return nil, errors.New("etcd is unavailable at http://127.0.0.1:2379")
		},
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) {
			return nil, errors.New("not reached")
		},
	}
	r, err := NewReflector(ReflectorConfig[*widget.Widget]{Name: "widgets", ListerWatcher: lw,
		Store: NewDeltaFIFO(DeltaFIFOOptions[*widget.Widget]{}), Backoff: fastBackoff, NoFullJitter: true,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "list/watch failed") {
		if time.Now().After(deadline) {
			t.Fatalf("no log of the failing list: %q", logs.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the log the reflector writes
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "reflector=widgets") ||
		!strings.Contains(out, "etcd is unavailable") {
		t.Fatalf("log %q lacks level, name or error", out)
	}
}
