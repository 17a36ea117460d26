package main

import (
	"fmt"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/storage"
)

// TestWatchErrorRecognisesGoneFromTheWire: the 410 of a watch ERROR event
// read over HTTP (a Status turned back into a *storage.Error, wrapped as
// the reflector wraps it) is told apart from an interruption.
func TestWatchErrorRecognisesGoneFromTheWire(t *testing.T) {
	var out strings.Builder
	p := &eventPrinter{out: &out}
	st := apierrors.NewResourceExpired("too old resource version: 3 (9)").ErrStatus
	p.watchError(fmt.Errorf("watch error event: %w", storage.FromStatus(&st)))
	p.watchError(fmt.Errorf("watch error event: %w", storage.NewUnavailableError(nil, nil)))
	got := out.String()
	if !strings.Contains(got, "410 Gone (watch error event: too old resource version: 3 (9)): relisting") ||
		!strings.Contains(got, "watch interrupted (watch error event: etcd is unavailable)") {
		t.Fatalf("printed:\n%s", got)
	}
}
