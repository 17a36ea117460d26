// Package filters holds what the server wraps around every request before
// a handler sees it, as Kubernetes' endpoints/filters does: the request's
// info for logs and metrics (RequestInfo), the access log (LogRequest,
// LogWatchStart), the in-flight limits (InFlight), the request deadline
// with its 504 and the body read deadline (WithTimeout), the status
// recorder, and the connection budget of the listener
// (LimitConnections). Package server chains them; this package knows
// nothing of the server.
package filters
