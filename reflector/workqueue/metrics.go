package workqueue

import "time"

// Metrics receives the measurements of one queue. Implementations must be
// safe for concurrent use and cheap: most calls are made with the queue's
// lock held, so they must not call back into the queue. Config.Metrics nil means no metrics (and no per-item timestamps are
// kept). NewPrometheusMetrics gives an implementation backed by Prometheus.
type Metrics interface {
	// Added is called when an item becomes dirty (an Add that was not
	// de-duplicated).
	Added()
	// Depth reports the number of items waiting to be handed out by Get.
	Depth(n int)
	// Latency reports how long an item waited between being queued and Get.
	Latency(d time.Duration)
	// WorkDuration reports how long an item was processed (Get to Done).
	WorkDuration(d time.Duration)
	// Retried is called by AddRateLimited.
	Retried()
}

// ProgressMetrics is implemented by Metrics that also report the work in
// progress, as client-go's workqueue_unfinished_work_seconds and
// workqueue_longest_running_processor_seconds do. A queue created with
// such Metrics calls TrackProgress once, when it is created, with a
// function that returns, when called, the seconds of work done so far on
// the items being processed (Get without Done yet) in total and for the
// longest-running one. The function takes the queue's lock: call it from
// outside the queue's calls (a scrape), never from a Metrics method.
type ProgressMetrics interface {
	Metrics
	TrackProgress(inProgress func() (unfinished, longest time.Duration))
}

// noMetrics is the default Metrics: it records nothing.
type noMetrics struct{}

func (noMetrics) Added()                     {}
func (noMetrics) Depth(int)                  {}
func (noMetrics) Latency(time.Duration)      {}
func (noMetrics) WorkDuration(time.Duration) {}
func (noMetrics) Retried()                   {}
