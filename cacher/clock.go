package cacher

import "k8s.io/utils/clock"

// clocks are the cacher's time sources; no other code of the package reads
// the time or starts a timer.
type clocks struct {
	// sched is Config.Clock: it times the cacher's schedule (bookmark
	// rounds, consistency checks, progress requests, the shared
	// catch-up read), which a test may drive with a fake clock.
	sched clock.WithTickerAndDelayedExecution
	// wall times the feed's and the watchers' liveness polls, retries and
	// timeouts, and what is aimed at a request context's deadline (a
	// context expires on the wall clock): the real clock, but for tests of
	// the package's own state machines.
	wall clock.WithTickerAndDelayedExecution
}
