package builder_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
)

// failing fails Reconcile for "bad" with an error and panics for "boom".
type failing struct{}

func (failing) Reconcile(_ context.Context, req controller.Request) (controller.Result, error) {
	switch req.Name {
	case "bad":
		return controller.Result{}, errors.New("the widget is bad")
	case "boom":
		panic("the widget exploded")
	}
	return controller.Result{}, nil
}

// logLine returns the first JSON log line whose msg contains msg and
// whose name is name, waiting up to 10 s for it.
func logLine(t *testing.T, logs *syncBuffer, msg, name string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, l := range strings.Split(logs.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && strings.Contains(m["msg"].(string), msg) && m["name"] == name {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line %q for %s within 10s; logs:\n%s", msg, name, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReconcileErrorAndPanicAreVisible: a returned error and a panic each
// give a log line with the controller's name, the object and the error
// (and the stack for the panic), and increment the reconcile metrics.
func TestReconcileErrorAndPanicAreVisible(t *testing.T) {
	e, ctx := newEnv(t), testCtx(t)
	require.NoError(t, builder.ControllerManagedBy(e.m).Named("failing").For(&widget.Widget{}).Complete(failing{}))
	e.start(t)

	require.NoError(t, e.c.Create(ctx, widget.NewWidget("default", "bad")))
	line := logLine(t, e.logs, "reconcile failed", "bad")
	require.Equal(t, "failing", line["controller"])
	require.Equal(t, "default", line["namespace"])
	require.Equal(t, "the widget is bad", line["err"])
	require.Equal(t, "ERROR", line["level"])

	require.NoError(t, e.c.Create(ctx, widget.NewWidget("default", "boom")))
	line = logLine(t, e.logs, "reconcile panicked", "boom")
	require.Equal(t, "failing", line["controller"])
	require.Equal(t, "the widget exploded", line["panic"])
	require.Contains(t, line["stack"], "Reconcile")

	require.Eventually(t, func() bool {
		return metricValue(t, e, "controller_runtime_reconcile_panics_total", "") >= 1 &&
			metricValue(t, e, "controller_runtime_reconcile_errors_total", "") >= 2
	}, 10*time.Second, 20*time.Millisecond)
	require.GreaterOrEqual(t, metricValue(t, e, "controller_runtime_reconcile_total", "error"), 2.0)
	families, err := e.reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range families {
		names = append(names, f.GetName())
	}
	require.Contains(t, names, "controller_runtime_reconcile_time_seconds")
	require.Contains(t, names, "workqueue_adds_total", "the controller's work queue metrics")
}

// metricValue returns the counter name{controller="failing"} (and
// result=result when not ""), 0 when absent.
func metricValue(t *testing.T, e *env, name, result string) float64 {
	t.Helper()
	families, err := e.reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if (l.GetName() == "controller" && l.GetValue() != "failing") || (l.GetName() == "result" && l.GetValue() != result) {
					continue next
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}
