// Package request owns the parsing of a list or watch request's query
// parameters (resourceVersion, resourceVersionMatch, limit, continue,
// labelSelector, fieldSelector, shardSelector, watch, allowWatchBookmarks,
// sendInitialEvents, timeoutSeconds) into ListParams, with Kubernetes'
// ListOptions validation: malformed values are 400, invalid combinations
// 422. Package server calls it; this package knows nothing of the server.
package request
