package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server/filters"
	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
)

// Server is the HTTP API. It implements http.Handler; Serve and
// ListenAndServe run it on a listener with graceful shutdown.
type Server struct {
	cfg       Config
	log       *slog.Logger
	resources map[string]*resource // by group/version/plural
	groups    []string             // named groups (not core) in registration order
	enc       *wire.EventEncoder
	metrics   *serverMetrics // nil without Config.Metrics
	openapi   *schema.OpenAPI
	inflight  *filters.InFlight
	timeout   *filters.Timeout
	watches   *filters.WatchLimits
	// clock times the slow-watcher policy (see watchdog): the real clock,
	// but for the tests that drive that policy with a fake one.
	clock clock.WithDelayedExecution

	closeOnce sync.Once
	// closing is closed by Close; every watch stream ends when it is.
	closing chan struct{}
	// activeWatches counts the watch streams being served.
	activeWatches atomic.Int64
}

// resource is a registered Resource with derived values.
type resource struct {
	Resource
	// Type is what its schema means: checks, table, managed fields.
	*schema.Type
	gv       k8sschema.GroupVersion
	gvString string
	listKind string
	wire     *wire.Kind      // its objects on the wire and their shared encodings
	fields   map[string]bool // selectable field labels
	// registry is the write path over Storage: it sets and carries the
	// server-owned metadata (uid, creationTimestamp, generation, deletion).
	registry *registry.Store
}

// New validates cfg and returns a Server for its resources.
func New(cfg Config) (*Server, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       c,
		log:       c.Logger,
		resources: map[string]*resource{},
		enc:       &wire.EventEncoder{},
		closing:   make(chan struct{}),
		clock:     clock.RealClock{},
		inflight:  filters.NewInFlight(c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight),
	}
	s.watches = filters.NewWatchLimits(c.MaxWatches, c.MaxWatchesPerUser)
	s.timeout = &filters.Timeout{Max: c.RequestTimeout, BodyRead: c.BodyReadTimeout, WriteError: s.writeError}
	if c.Metrics != nil {
		m, err := newServerMetrics(c.Metrics, s)
		if err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
		s.metrics = m
	}
	var types []*schema.Type
	for _, r := range c.Resources {
		rr := &resource{Resource: r, gv: r.GroupVersion(), listKind: r.Kind + "List",
			fields: map[string]bool{"metadata.name": true, "metadata.namespace": true}}
		rr.gvString = rr.gv.String()
		rr.wire = wire.NewKind(rr.gvString, rr.Kind)
		if rr.registry, err = registry.New(registry.Config{Storage: r.Storage,
			Resource: k8sschema.GroupResource{Group: r.Group, Resource: r.Plural}, Kind: r.Kind}); err != nil {
			return nil, fmt.Errorf("server: resource %s: %w", r.Plural, err)
		}
		if rr.Type, err = schema.NewType(schema.TypeConfig{Group: r.Group, Version: r.Version, Kind: r.Kind,
			Plural: r.Plural, Namespaced: r.Namespaced, Schema: r.Schema, PrinterColumns: r.PrinterColumns,
			Validate: r.Validate}); err != nil {
			return nil, fmt.Errorf("server: resource %s: %w", r.Plural, err)
		}
		for _, f := range r.SelectableFields {
			rr.fields[f] = true
		}
		if rr.Singular == "" {
			rr.Singular = strings.ToLower(r.Kind)
		}
		s.resources[r.Group+"/"+r.Version+"/"+r.Plural] = rr
		types = append(types, rr.Type)
		if r.Group != "" && !contains(s.groups, r.Group) {
			s.groups = append(s.groups, r.Group)
		}
	}
	if err := schema.NewFieldManagers(types); err != nil {
		return nil, err
	}
	if s.openapi, err = schema.NewOpenAPI(types, c.GitVersion); err != nil {
		return nil, err
	}
	return s, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// target is what a request path names.
type target struct {
	res         *resource
	namespace   string // "" for cluster-scoped objects or all namespaces
	name        string // "" for the collection
	subresource string // "status", "scale" or "" for the object itself
}

// ServeHTTP implements http.Handler. /livez, /readyz and /healthz are
// answered first, open to anyone (but 401 for credentials the
// Authenticator refuses) and outside every limit. Every other request is
// authenticated (401 before any limit), then counts against its in-flight
// limit (429 past it; watches have their own limits), runs under
// RequestTimeout (watches under their own timeoutSeconds), and is logged
// and measured when answered.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := splitPath(req.URL.Path)
	if isHealthPath(parts) {
		if err := s.checkCredentials(req); err != nil {
			w.Header().Set("Connection", "close")
			s.writeError(w, req, err)
			return
		}
		s.serveHealth(w, req, parts)
		return
	}
	start := time.Now()
	info := &filters.RequestInfo{}
	rec := &filters.StatusRecorder{ResponseWriter: w}
	long := filters.IsLongRunning(req)
	s.serveLimited(rec, req, parts, long, info)
	code := rec.Code
	if code == 0 {
		code = http.StatusOK // net/http's answer to a handler that wrote nothing
	}
	if info.Resource != "" {
		s.metrics.observe(info.Verb, info.Resource, info.Subresource, code, time.Since(start))
	}
	filters.LogRequest(s.log, req, info, metricVerb(req.Method), code, time.Since(start))
}

// serveLimited authenticates req, then serves it within its in-flight
// limit and its deadline: a request with wrong credentials is 401 even when
// the limit is reached, and never takes a slot. info learns the user.
func (s *Server) serveLimited(w http.ResponseWriter, req *http.Request, parts []string, long bool, info *filters.RequestInfo) {
	req, err := s.authenticate(req, info)
	if err != nil {
		// The client has nothing to keep the connection for.
		w.Header().Set("Connection", "close")
		s.writeError(w, req, err)
		return
	}
	if long {
		s.serveAPI(w, req, parts, true, info)
		return
	}
	kind := filters.RequestKind(req)
	release, ok := s.inflight.Acquire(kind)
	if !ok {
		s.metrics.drop(kind)
		s.writeError(w, req, filters.ErrTooManyRequests())
		return
	}
	defer release()
	s.timeout.Serve(w, req, func(w http.ResponseWriter, req *http.Request) { s.serveAPI(w, req, parts, false, info) })
}

// serveAPI authorizes and dispatches an authenticated request; info
// learns its verb and resource.
func (s *Server) serveAPI(w http.ResponseWriter, req *http.Request, parts []string, long bool, info *filters.RequestInfo) {
	if !isResourcePath(parts) {
		if err := s.authorizeNonResource(req); err != nil {
			s.writeError(w, req, err)
			return
		}
	}
	if long {
		filters.LogWatchStart(s.log, req, info)
	}
	switch {
	case len(parts) == 1 && parts[0] == "metrics" && s.metrics != nil:
		s.metrics.handler.ServeHTTP(w, req)
		return
	case len(parts) >= 2 && parts[0] == "openapi" && s.openapi.Serve(w, req, parts):
		return
	}
	if accept := req.Header.Values("Accept"); !wire.AcceptsJSON(accept) && !schema.WantsTable(accept) {
		if !wire.WantsYAML(accept) || request.IsWatch(req) {
			s.writeError(w, req, wire.NotAcceptable(req.Header.Get("Accept")))
			return
		}
		yw := &wire.YAMLWriter{ResponseWriter: w}
		defer yw.Finish()
		w = yw
	}
	switch {
	case len(parts) == 0:
		s.serveDiscovery(w, req, func() (any, error) { return s.rootPaths(), nil })
	case len(parts) == 1 && parts[0] == "version":
		s.serveDiscovery(w, req, s.versionInfo)
	case len(parts) == 1 && parts[0] == "api":
		// An empty list when no core-group resource is registered tells
		// discovery clients so without an error.
		s.serveDiscovery(w, req, func() (any, error) { return s.coreVersions(), nil })
	case len(parts) == 2 && parts[0] == "api":
		s.serveDiscovery(w, req, func() (any, error) { return s.resourceList("", parts[1]) })
	case len(parts) >= 1 && parts[0] == "apis" && len(parts) <= 3:
		s.serveAPIs(w, req, parts[1:])
	case selfReviewPath(parts) != "":
		s.serveSelfReview(w, req, selfReviewPath(parts))
	case isResourcePath(parts):
		group, version, rest := "", parts[1], parts[2:]
		if parts[0] == "apis" {
			group, version, rest = parts[1], parts[2], parts[3:]
		}
		t, err := s.resolve(group, version, rest)
		if err != nil {
			s.writeError(w, req, err)
			return
		}
		info.Verb, info.Resource, info.Subresource = verb(req, t), t.res.Plural, t.subresource
		s.serveAuthorized(w, req, t)
	default:
		s.writeError(w, req, errPathNotFound)
	}
}

// splitPath splits a clean URL path into its segments.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// resolve maps {plural}[/{name}] or namespaces/{ns}/{plural}[/{name}]
// below /apis/{group}/{version} to a target.
func (s *Server) resolve(group, version string, rest []string) (target, error) {
	var t target
	if len(rest) >= 3 && rest[0] == "namespaces" {
		t.namespace, rest = rest[1], rest[2:]
		if !validSegment(t.namespace) {
			return t, badRequest("invalid namespace in path")
		}
	}
	if len(rest) == 0 || len(rest) > 3 {
		return t, apierrors.NewNotFound(k8sschema.GroupResource{Group: group}, strings.Join(rest, "/"))
	}
	res := s.resources[group+"/"+version+"/"+rest[0]]
	if res == nil {
		return t, apierrors.NewNotFound(k8sschema.GroupResource{Group: group, Resource: rest[0]}, "")
	}
	t.res = res
	if len(rest) >= 2 {
		t.name = rest[1]
		if !validSegment(t.name) {
			return t, badRequest("invalid name in path")
		}
	}
	if len(rest) == 3 {
		if t.subresource = rest[2]; !res.hasSubresource(t.subresource) {
			return t, errPathNotFound
		}
	}
	if !res.Namespaced && t.namespace != "" {
		return t, apierrors.NewNotFound(k8sschema.GroupResource{Group: group, Resource: res.Plural},
			"(cluster-scoped resource under a namespace)")
	}
	if res.Namespaced && t.namespace == "" && t.name != "" {
		return t, apierrors.NewNotFound(k8sschema.GroupResource{Group: group, Resource: res.Plural}, t.name)
	}
	return t, nil
}

// serveAuthorized serves a resource request the Authorizer allows (403
// otherwise).
func (s *Server) serveAuthorized(w http.ResponseWriter, req *http.Request, t target) {
	if err := s.authorizeResource(req, t); err != nil {
		s.writeError(w, req, err)
		return
	}
	s.serveResource(w, req, t)
}

// serveResource dispatches a request on a collection or an object by method.
func (s *Server) serveResource(w http.ResponseWriter, req *http.Request, t target) {
	if t.subresource != "" {
		s.serveSubresource(w, req, t)
		return
	}
	if t.name == "" {
		switch {
		case req.Method == http.MethodGet:
			s.serveList(w, req, t)
		case req.Method == http.MethodPost && (t.namespace != "" || !t.res.Namespaced):
			s.serveCreate(w, req, t)
		case req.Method == http.MethodDelete:
			s.serveDeleteCollection(w, req, t)
		default:
			allow := "GET, DELETE"
			if t.namespace != "" || !t.res.Namespaced {
				allow = "GET, POST, DELETE"
			}
			w.Header().Set("Allow", allow)
			s.writeError(w, req, methodNotAllowed(req.Method, t.res.Plural))
		}
		return
	}
	switch req.Method {
	case http.MethodGet:
		s.serveGet(w, req, t)
	case http.MethodPut:
		s.serveUpdate(w, req, t)
	case http.MethodPatch:
		s.servePatch(w, req, t)
	case http.MethodDelete:
		s.serveDelete(w, req, t)
	default:
		w.Header().Set("Allow", "GET, PUT, PATCH, DELETE")
		s.writeError(w, req, methodNotAllowed(req.Method, t.res.Plural))
	}
}

// collectionKey is the storage key listing or watching t's collection.
func (t target) collectionKey() string {
	if t.namespace == "" {
		return t.res.KeyRoot
	}
	return t.res.KeyRoot + "/" + t.namespace
}

// objectKey is the storage key of the object t.name in t.namespace.
func (t target) objectKey() string {
	return t.collectionKey() + "/" + t.name
}

// validSegment rejects path segments that would escape a storage key.
func validSegment(s string) bool { return s != "" && s != "." && s != ".." }
