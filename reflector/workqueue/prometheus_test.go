package workqueue_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reflector/workqueue"
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
		"listwatch_workqueue_adds_total":             3,
		"listwatch_workqueue_depth":                  2,
		"listwatch_workqueue_retries_total":          1,
		"listwatch_workqueue_queue_duration_seconds": 1,
		"listwatch_workqueue_work_duration_seconds":  1,
	}, got)

	_, err = workqueue.NewPrometheusMetrics(reg, "widgets")
	assert.Error(t, err, "a second queue with the same name is refused")
}
