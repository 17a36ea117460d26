package workqueue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reflector/workqueue"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

func TestPrometheusMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := workqueue.NewPrometheusMetrics(reg, "widgets")
	require.NoError(t, err)
	q := workqueue.NewRateLimiting[string](
		workqueue.NewItemExponentialFailureRateLimiter[string](0, 0),
		workqueue.Config{Metrics: m})
	defer q.ShutDown()

	q.Add("a")
	q.Add("b")
	q.Done(get[string](t, q))
	q.AddRateLimited("c")

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]float64{}
	for _, f := range families {
		require.Len(t, f.GetMetric(), 1)
		metric := f.GetMetric()[0]
		require.Equal(t, "widgets", metric.GetLabel()[0].GetValue())
		switch {
		case metric.Counter != nil:
			got[f.GetName()] = metric.GetCounter().GetValue()
		case metric.Gauge != nil:
			got[f.GetName()] = metric.GetGauge().GetValue()
		case metric.Histogram != nil:
			got[f.GetName()] = float64(metric.GetHistogram().GetSampleCount())
		}
	}
	assert.Equal(t, map[string]float64{
		"workqueue_adds_total":                        3,
		"workqueue_depth":                             2,
		"workqueue_retries_total":                     1,
		"workqueue_queue_duration_seconds":            1,
		"workqueue_work_duration_seconds":             1,
		"workqueue_unfinished_work_seconds":           0,
		"workqueue_longest_running_processor_seconds": 0,
	}, got)

	_, err = workqueue.NewPrometheusMetrics(reg, "widgets")
	assert.Error(t, err, "a second queue with the same name is refused")
}

// Work in progress is reported as client-go reports it: the seconds done
// so far on items between Get and Done, in total and for the longest.
func TestPrometheusMetricsWorkInProgress(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := workqueue.NewPrometheusMetrics(reg, "nodes")
	require.NoError(t, err)
	clock := workqueuetest.NewFakeClock(time.Unix(1000, 0))
	q := workqueue.New[string](workqueue.Config{Metrics: m, Clock: clock})
	defer q.ShutDown()

	q.Add("a")
	q.Add("b")
	a := get[string](t, q)
	clock.Step(3 * time.Second)
	b := get[string](t, q)
	clock.Step(2 * time.Second)
	gauges := func() map[string]float64 {
		families, err := reg.Gather()
		require.NoError(t, err)
		out := map[string]float64{}
		for _, f := range families {
			if g := f.GetMetric()[0].Gauge; g != nil && strings.HasSuffix(f.GetName(), "_seconds") {
				out[f.GetName()] = g.GetValue()
			}
		}
		return out
	}
	assert.Equal(t, map[string]float64{
		"workqueue_unfinished_work_seconds":           7, // a: 5 s, b: 2 s
		"workqueue_longest_running_processor_seconds": 5,
	}, gauges())
	q.Done(a)
	q.Done(b)
	assert.Equal(t, map[string]float64{
		"workqueue_unfinished_work_seconds":           0,
		"workqueue_longest_running_processor_seconds": 0,
	}, gauges())
}
