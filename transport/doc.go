// Package transport is the HTTP transport every client of a
// Kubernetes-compatible HTTP API in this library sends through (the
// object client of package client, made by client.NewHTTP, and the
// ListerWatchers of package reflector/httplw): a client-side rate limit
// and the resending of 429 Too Many Requests, as client-go's REST client
// does them (rest.Config's QPS and Burst, and its Retry-After retries).
//
// Contract:
//   - Rate limit: one token bucket per *Transport, refilled at QPS tokens a
//     second and holding up to Burst (defaults DefaultQPS, DefaultBurst:
//     client-go's 5 and 10; QPS < 0 turns the limit off). Every request
//     takes one token before it is sent; a watch (a request with
//     ?watch=true) takes one when it starts and none for its events, so a
//     watch open for hours counts once. Requests wait for their token in
//     the order they asked. A wait that cannot end before the request's
//     context deadline fails at once with a *ThrottleError
//     (errors.Is(err, ErrThrottled) and errors.Is(err,
//     context.DeadlineExceeded) both hold), without sleeping; a context
//     ended during the wait ends it with the context's error. A wait longer
//     than LongWait is logged ("waited before sending request"); with
//     Config.Registerer, the waits, the ThrottleErrors and the 429 retries
//     are measured (rest_client_rate_limiter_duration_seconds,
//     rest_client_rate_limiter_deadline_exceeded_total,
//     rest_client_request_retries_total).
//   - 429: an answer 429 to a request that is not a watch is sent again
//     after its Retry-After (seconds or an HTTP date, capped at
//     MaxRetryAfter; 1 s when absent), up to DefaultTooManyRequestsRetries
//     times, each time taking a token again. When the wait would not end
//     before the request's deadline, the 429 is returned at once. A watch's
//     429 is returned as it is: the reflector backs the watch off with its
//     own exponential backoff.
//   - Every verb is resent after a 429, POST and PATCH included: a 429
//     means the server shed the request before processing it (this
//     library's in-flight and watch limits, and kube-apiserver's
//     max-in-flight and priority-and-fairness filters, answer it before
//     the handler runs). A request whose body cannot be produced again (no
//     GetBody) gets its first 429.
//
// Share one Transport between every client of one server to share one
// budget: the manager (package manager) builds one from Options.QPS and
// Options.Burst and gives it to its client and to every informer's
// ListerWatcher. client.NewHTTP and httplw.New keep a *Transport they are
// given (in HTTPConfig.HTTPClient, Config.HTTPClient) and wrap any other
// transport in a new one with the defaults, so two of them given the same
// plain http.Client have a budget each, as two client-go REST clients
// made from one rest.Config without a RateLimiter do.
//
// Where it differs from client-go: client-go does not rate-limit the first
// attempt of a watch at all, and retries a watch's 429 within the REST
// client. Here a watch start takes a token, because a watch may carry a
// whole list (sendInitialEvents, the reflector's watch-list), and its 429
// goes to the reflector's backoff (800 ms doubling to 30 s), which eases
// off a server whose watch slots are full. controller-runtime's GetConfig
// turns client-go's limit off (QPS -1) and relies on the API server's
// priority and fairness; this library's server sheds load with in-flight
// limits that all clients share, so the limit stays on by default: set
// QPS to -1 to turn it off.
//
// Example:
//
//	rt, err := transport.New(transport.Config{QPS: 20, Burst: 40})
//	hc := &http.Client{Transport: rt}
//	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: url, Kinds: kinds, HTTPClient: hc})
//	lw, err := httplw.New(httplw.Config{BaseURL: url, Version: "v1", Plural: "widgets", HTTPClient: hc})
//	// c and lw share one budget of 20 requests a second.
package transport
