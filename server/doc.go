// Package server is a Kubernetes-wire-compatible HTTP API over
// storage.Interface implementations (normally the cacher): list, watch,
// get, create, update, merge-patch and delete of JSON objects, plus the
// discovery documents stock clients need.
//
// # Paths
//
//	/version, /apis, /apis/{group}, /apis/{group}/{version}   discovery
//	/apis/{g}/{v}/{plural}                                    list, watch (all namespaces); create (cluster-scoped)
//	/apis/{g}/{v}/namespaces/{ns}/{plural}                    list, watch, create
//	/apis/{g}/{v}[/namespaces/{ns}]/{plural}/{name}           get (watch=true: one object), PUT, PATCH, DELETE
//
// Objects are unstructured JSON with apiVersion, kind and metadata; other
// fields are stored as given. The server sets uid, creationTimestamp and
// generation (bumped when anything outside metadata and status changes).
// PUT is optimistic when the body carries metadata.resourceVersion (409
// Conflict when stale) and unconditional otherwise; PATCH takes
// application/merge-patch+json (RFC 7386) or application/json-patch+json
// (RFC 6902), both implemented here, and treats a resourceVersion the
// patch sets as a precondition; DELETE accepts a
// DeleteOptions body with preconditions and returns the deleted object.
//
// # Lists and watches
//
// Query parameters: resourceVersion, resourceVersionMatch, limit, continue,
// labelSelector, fieldSelector (metadata.name, metadata.namespace and the
// resource's SelectableFields), and for watches (watch=true or watch=1)
// allowWatchBookmarks, sendInitialEvents and timeoutSeconds. They follow
// Kubernetes' validation: malformed values are 400, invalid combinations
// 422. Lists are streamed item by item. A watch is a chunked 200 response
// of one JSON {"type":..,"object":..} per line; a resource version too old
// to serve gives a 200 stream with one ERROR event carrying the 410
// Expired Status, as Kubernetes does. A watch ends cleanly after
// timeoutSeconds, or, without it, after a random time between
// Config.MaxWatchTimeout/2 and Config.MaxWatchTimeout. Objects are
// encoded by a reflection-free encoder for unstructured values whose
// output is encoding/json's (without its HTML escaping).
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
// watch that asks for Table) are encoded per watcher. Each watch buffers at
// most Config.WatchBufferSize encoded events; one whose buffer stays full
// for Config.SlowWatcherTimeout is ended without an error event (the
// client resumes from the last RV it received, losing nothing), and one
// whose connection accepts nothing for Config.WriteTimeout is cut off.
//
// # Errors
//
// Every error is a metav1.Status body with Kubernetes' code and reason:
// 400 BadRequest (a namespace in the body differing from the path's), 404
// NotFound, 405 MethodNotAllowed, 409 Conflict or AlreadyExists, 410
// Expired, 413 RequestEntityTooLarge (Config.MaxRequestBodyBytes), 415
// UnsupportedMediaType, 422 Invalid (ObjectMeta as apimachinery validates
// it, the schema, DeleteOptions, objects nested too deep to be read back),
// 429 TooManyRequests while storage is not ready, 504 for too-large
// resource versions, 500 only for real faults. Storage errors are mapped
// through their APIStatus; messages name no storage keys and no etcd or
// gRPC internals, which are logged instead. Nothing is written when a
// request fails.
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
// # Not implemented
//
// Server-side apply and strategic merge patch (415, as Kubernetes answers
// strategic merge patches for custom resources), dryRun (400), protobuf
// and Table output (JSON, or YAML on request, is returned), OpenAPI
// documents, finalizers and graceful deletion (DELETE removes at once),
// admission and authentication.
package server
