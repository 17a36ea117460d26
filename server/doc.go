// Package server is a Kubernetes-wire-compatible HTTP API over
// storage.Interface implementations (normally one cacher per resource):
// discovery, OpenAPI, list, watch, get, create, update, patch, server-side
// apply, delete and deletecollection of JSON objects, the /status and
// /scale subresources, health checks and metrics. Stock kubectl and
// client-go work against it.
//
// # Paths
//
//	/version, /api, /api/{v}, /apis, /apis/{g}, /apis/{g}/{v}   discovery
//	/openapi/v2, /openapi/v3, /openapi/v3/{prefix}                OpenAPI documents
//	/livez, /readyz, /healthz (?verbose, /readyz/{check})        health checks
//	/metrics                                                      Prometheus metrics (Config.Metrics)
//	{prefix}/{plural}                                             list, watch, deletecollection (all namespaces); create (cluster-scoped)
//	{prefix}/namespaces/{ns}/{plural}                             list, watch, create, deletecollection
//	{prefix}[/namespaces/{ns}]/{plural}/{name}                    get (watch=true: one object), PUT, PATCH, DELETE
//	{prefix}[/namespaces/{ns}]/{plural}/{name}/status|scale       GET, PUT, PATCH (Resource.Subresources)
//
// {prefix} is /api/{v} for the core group ("", as Kubernetes serves nodes
// and pods) and /apis/{g}/{v} for the others.
//
// # Writes
//
// Objects are unstructured JSON (or YAML, Content-Type:
// application/yaml; a body without Content-Type is JSON, as
// kube-apiserver reads it) with apiVersion, kind and metadata. Metadata is
// checked with apimachinery's ObjectMeta validation, the rest against
// Resource.Schema when one is given (an OpenAPI v3 structural schema, as a
// CRD carries; fields it does not declare are pruned, fieldValidation
// Strict/Warn/Ignore says what happens to unknown and duplicate fields),
// then by Resource.Validate when set; failures are 422 Invalid with
// Kubernetes' messages. Every write goes through package registry, which
// owns Kubernetes' metadata rules: create sets uid, creationTimestamp and
// generation 1 (a resourceVersion on a new object is 400); updates keep
// uid and creationTimestamp and bump generation only when something
// outside metadata and status changed; DELETE of an object with
// finalizers (its own, or one its propagationPolicy adds) sets
// deletionTimestamp (deletionGracePeriodSeconds 0) and keeps it, no finalizer may be added then, and the write that removes
// the last one deletes it. metadata.generateName is honoured; a generated
// name that is taken is made again, up to 8 names, as kube-apiserver does.
//
// PUT is optimistic when the body carries metadata.resourceVersion (409
// Conflict when stale) and unconditional otherwise. PATCH takes
// application/merge-patch+json (RFC 7386), application/json-patch+json
// (RFC 6902, evanphx/json-patch) and application/apply-patch+yaml:
// server-side apply with apimachinery's field manager over the schema
// (fieldManager required, force, conflicts 409 naming managers and
// fields, apply to a missing object creates it); a resourceVersion a
// patch sets is a precondition. Creates, updates and patches record
// Update operations in managedFields. dryRun=All on any write checks and
// answers without writing. DELETE takes DeleteOptions (body or query,
// validated as Kubernetes does) with uid/resourceVersion preconditions
// and answers the object's last state (or the marked object);
// ignoreStoreReadErrorWithClusterBreakingPotential removes an object
// whose stored value cannot be read (with the Authorizer's
// unsafe-delete-ignore-read-errors verb). A DELETE on a collection
// deletes what its labelSelector and fieldSelector match, each with the
// request's DeleteOptions, and answers the list of what went.
// propagationPolicy (or the deprecated orphanDependents) sets the garbage
// collector's finalizers as kube-apiserver does: Foreground adds
// foregroundDeletion and Orphan adds orphan, so the object stays marked
// until a collector (package gc, which a manager runs with
// Options.GarbageCollector) has deleted or orphaned its dependents and
// removed the finalizer; Background, the default of every resource,
// removes them;
// without a policy the object keeps the one it has. A second DELETE may
// change the policy.
// Strategic merge patch is 415, as Kubernetes answers it for custom
// resources.
//
// With Resource.Subresources.Status, writes to the object keep the stored
// status and writes to /status change only status; Subresources.Scale
// serves an autoscaling/v1 Scale mapped onto the object's fields (what
// kubectl scale uses).
//
// # Lists and watches
//
// Query parameters: resourceVersion, resourceVersionMatch, limit, continue,
// labelSelector, fieldSelector (metadata.name, metadata.namespace and the
// resource's SelectableFields), and for watches (watch=true or watch=1)
// allowWatchBookmarks, sendInitialEvents and timeoutSeconds. They follow
// Kubernetes' validation: malformed values are 400, invalid combinations
// 422, a resourceVersion too large to be served 504. Lists are streamed
// item by item (continue is omitted when empty); a list served by a cacher
// built with CacheCodec copies its cached JSON. A watch is a chunked 200
// response of one JSON {"type":..,"object":..} per line; a resource
// version too old to serve gives a 200 stream with one ERROR event
// carrying the 410 Expired Status, as Kubernetes does. A watch ends
// cleanly after timeoutSeconds, or, without it, after a random time
// between Config.MaxWatchTimeout/2 and Config.MaxWatchTimeout. Objects are
// encoded by a reflection-free encoder for unstructured values whose
// output is encoding/json's (without its HTML escaping). Accept:
// application/json;as=Table;g=meta.k8s.io;v=v1 answers gets, lists and
// watches as Tables (Resource.PrinterColumns), application/yaml as YAML
// (not for watches); an Accept that allows none of these (protobuf
// only) is 406.
//
// # Encoding
//
// The server uses cached encodings only through capabilities the storage
// package declares; it does not depend on the watch cache. A cacher whose
// Config.Codec is CacheCodec of the resource keeps each object as the
// JSON this server writes for it and names that format
// (storage.FormatNamer). A store that answers lists with its encodings
// (storage.EncodedLister) in that format has its lists written by copying
// the cached bytes, with no decoding and no encoding per item; any other
// store's lists are decoded and encoded.
//
// # Watch fan-out and slow clients
//
// A change's event line is made once, whatever the number of watchers: a
// store that implements storage.EncodedWatcher (the cacher) delivers the
// change's object wrapped in a storage.EncodedObject whose Encodings every
// watcher of that change shares, and the first HTTP watcher to reach the
// event makes the line there for the others (one per event type). The
// cache points at those Encodings weakly: a watcher that reaches the
// change after every other has let go of them (catching up from the
// cache's history) makes the line again. With CacheCodec, the line is
// built from the cached JSON without encoding the object. Initial events
// are not shared: each watcher makes its own lines for them (from the
// cached JSON with CacheCodec, encoding the objects otherwise). Objects that
// come unwrapped (the etcd3 store, events the cacher relays from etcd, a
// watch that asks for Table) are encoded per watcher.
//
// # Slow watch clients
//
// One policy, one knob: a watch whose client takes nothing for
// Config.SlowWatcherTimeout (5 s) while events wait for it (a write to
// its connection blocks that long; a watchdog timer then sets the write
// deadline in the past) is ended without an ERROR event, its storage watch released, logged and
// counted in listwatch_server_slow_watchers_ended_total, as Kubernetes ends a
// watcher too slow for its cache; a client that takes anything, however
// slowly, starts the time again. The client resumes
// from the last RV it decoded and loses nothing (or gets 410 and relists
// if that RV has left the history). Everything short of that is lag, and
// lag is the storage's: the cacher never ends a watch, a watcher that
// falls behind its live queue catches up from the cache's history. The
// server holds no queue of its own: a watch is served by its request's
// goroutine alone, which takes events from the storage watch, encodes and
// writes them, flushing once per batch of what was already waiting.
// Over HTTP/2 (Serve speaks it over TLS and, as h2c, over cleartext) many
// watches share one connection and that goroutine is all a watch costs;
// over HTTP/1.1 each watch holds a connection, and net/http adds a
// background reader goroutine per connection: two per watch.
//
// # Security and limits
//
// Config.TLS serves HTTPS. Config.Authenticator identifies users (package
// auth: bearer tokens from a kube-apiserver token file, TLS client
// certificates; auth.Authenticators chains them; 401 otherwise, or
// system:anonymous with AllowAnonymous); Config.Authorizer decides each
// request from Kubernetes-style auth.Attributes (403 otherwise);
// auth.ReadAllWriteGroups is an example policy. Serve refuses a non-loopback address without TLS and
// authentication unless AllowInsecureNonLoopback. Requests other than
// watches are bounded by RequestTimeout (504) and by in-flight limits
// (MaxRequestsInFlight, MaxMutatingRequestsInFlight: 429 with
// Retry-After), counted after authentication (wrong credentials are 401);
// watches by MaxWatches and MaxWatchesPerUser (429); bodies by
// MaxRequestBodyBytes (413) and BodyReadTimeout; connections by
// MaxConnections. SelfSubjectAccessReview and SelfSubjectReview are served
// (kubectl auth can-i, kubectl auth whoami).
//
// # Errors
//
// Every error is a metav1.Status body with Kubernetes' code and reason:
// 400 BadRequest, 401, 403, 404 NotFound, 405 MethodNotAllowed, 406, 409
// Conflict or AlreadyExists, 410 Expired, 413 RequestEntityTooLarge, 415
// UnsupportedMediaType, 422 Invalid, 429 TooManyRequests (in-flight and
// watch limits, storage not ready), 503 when etcd cannot be reached, 504 for
// timeouts and too-large resource versions, 500 only for real faults.
// Storage errors are mapped through their APIStatus; messages name no
// storage keys and no etcd or gRPC internals, which are logged instead.
// Nothing is written when a request fails.
//
// # Observability
//
// Config.Metrics receives apiserver_request_total (verbs GET, LIST, WATCH,
// POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION),
// apiserver_request_duration_seconds, apiserver_longrunning_requests,
// apiserver_current_inflight_requests, apiserver_dropped_requests_total
// and listwatch_server_slow_watchers_ended_total, and serves everything
// registered on it at /metrics. /readyz checks etcd
// (a quorum read), each resource's storage readiness, shutdown and
// Config.ReadyChecks; /livez does not depend on etcd. Config.Logger gets
// every failed request and, at RequestLogLevel, one line per request.
//
// # Running
//
//	srv, err := server.New(server.Config{Resources: []server.Resource{{
//		Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget",
//		Namespaced: true, Storage: store, KeyRoot: "/widgets",
//	}}})
//	err = srv.ListenAndServe(ctx, "127.0.0.1:8080") // returns after ctx ends and shutdown completes
//
// Server is also an http.Handler (httptest.NewServer(srv)); Close ends its
// watch streams. With curl:
//
//	curl http://127.0.0.1:8080/apis/demo.listwatch.dev/v1/namespaces/default/widgets
//	curl -N 'http://127.0.0.1:8080/apis/demo.listwatch.dev/v1/namespaces/default/widgets?watch=true&resourceVersion=0'
//	curl -X POST -H 'Content-Type: application/json' -d '{"metadata":{"name":"w1"}}' \
//	  http://127.0.0.1:8080/apis/demo.listwatch.dev/v1/namespaces/default/widgets
//
// # Packages
//
// Package server keeps routing, the handlers and the server's lifecycle;
// its subpackages own one concern each and never import it:
//
//	server/auth     users, Authenticator (tokens, client certificates), Attributes and Authorizer, UserFrom, SelfSignedCertificate
//	server/filters  what wraps every request: request info, access log, in-flight limits, request and body deadlines, connection budget
//	server/schema   what a resource's schema means: object checks (Normalize), Table, managed fields and apply, OpenAPI, fieldValidation
//	server/request  decoding a request: list and watch parameters (ParseList), a write's preamble (ReadWrite), dryRun, JSON and merge patches
//	server/wire     the bytes: JSON encoding (AppendJSON), objects and watch lines of a kind (Kind, EventEncoder), the cache Codec, media types, YAML
//
// Dependencies point down: wire < schema < request < filters; auth stands
// alone (internal/layering checks it).
//
// # Not implemented
//
// Strategic merge patch, protobuf, admission (mutating or validating
// webhooks), RBAC (authorization is the Authorizer hook), garbage
// collection (nothing here acts on ownerReferences or on the orphan and
// foregroundDeletion finalizers: a collector such as examples/cluster's
// does, and without one an object deleted with Foreground or Orphan stays
// marked), graceful deletion periods (deletionGracePeriodSeconds is
// always 0), aggregated discovery, and conversion between versions (each
// resource is served in one version).
package server
