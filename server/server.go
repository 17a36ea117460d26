package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server/crdschema"
)

// Server is the HTTP API. It implements http.Handler; Serve and
// ListenAndServe run it on a listener with graceful shutdown.
type Server struct {
	cfg       Config
	log       *slog.Logger
	resources map[string]*resource // by group/version/plural
	groups    []string             // named groups (not core) in registration order
	enc       *eventEncoder
	metrics   *serverMetrics // nil without Config.Metrics
	openapi   *openAPI
	inflight  inflightLimits

	closeOnce sync.Once
	// closing is closed by Close; every watch stream ends when it is.
	closing chan struct{}
	// activeWatches counts the watch streams being served.
	activeWatches atomic.Int64
}

// resource is a registered Resource with derived values.
type resource struct {
	Resource
	gv       schema.GroupVersion
	gvString string
	listKind string
	wire     wireFormats     // names of its shared encodings (encode.go)
	fields   map[string]bool // selectable field labels
	// validator checks objects against Schema; nil without one.
	validator *validate.SchemaValidator
	// columns are the table output's columns.
	columns []tableColumn
	// fieldManager records managedFields and merges apply patches.
	fieldManager *managedfields.FieldManager
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
		enc:       &eventEncoder{},
		closing:   make(chan struct{}),
		inflight:  newInflightLimits(c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight),
	}
	if c.Metrics != nil {
		m, err := newServerMetrics(c.Metrics, s)
		if err != nil {
			return nil, fmt.Errorf("server: registering metrics: %w", err)
		}
		s.metrics = m
	}
	var ordered []*resource
	for _, r := range c.Resources {
		rr := &resource{Resource: r, gv: r.GroupVersion(), listKind: r.Kind + "List",
			fields: map[string]bool{"metadata.name": true, "metadata.namespace": true}}
		rr.gvString = rr.gv.String()
		rr.wire = newWireFormats(rr.gvString, rr.Kind)
		if rr.registry, err = registry.New(registry.Config{Storage: r.Storage,
			Resource: schema.GroupResource{Group: r.Group, Resource: r.Plural}, Kind: r.Kind}); err != nil {
			return nil, fmt.Errorf("server: resource %s: %w", r.Plural, err)
		}
		if rr.columns, err = tableColumns(r.PrinterColumns); err != nil {
			return nil, fmt.Errorf("server: resource %s: %w", r.Plural, err)
		}
		if rr.validator, err = crdschema.NewValidator(r.Schema); err != nil {
			return nil, fmt.Errorf("server: resource %s: %w", r.Plural, err)
		}
		for _, f := range r.SelectableFields {
			rr.fields[f] = true
		}
		if rr.Singular == "" {
			rr.Singular = strings.ToLower(r.Kind)
		}
		s.resources[r.Group+"/"+r.Version+"/"+r.Plural] = rr
		ordered = append(ordered, rr)
		if r.Group != "" && !contains(s.groups, r.Group) {
			s.groups = append(s.groups, r.Group)
		}
	}
	if err := newFieldManagers(ordered); err != nil {
		return nil, err
	}
	if s.openapi, err = newOpenAPI(ordered, c.GitVersion); err != nil {
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
// answered first, open to anyone and outside every limit. Every other
// request counts against its in-flight limit (429 past it; watches are not
// counted), runs under RequestTimeout (watches under their own
// timeoutSeconds), and is logged and measured when answered.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := splitPath(req.URL.Path)
	if isHealthPath(parts) {
		s.serveHealth(w, req, parts)
		return
	}
	start := time.Now()
	info := &requestInfo{}
	req = req.WithContext(context.WithValue(req.Context(), requestInfoKey{}, info))
	rec := &statusRecorder{ResponseWriter: w}
	long := isLongRunning(req)
	s.serveLimited(rec, req, parts, long)
	code := rec.code
	if code == 0 {
		code = http.StatusOK // net/http's answer to a handler that wrote nothing
	}
	if info.resource != "" {
		s.metrics.observe(info.verb, info.resource, code, time.Since(start))
	}
	s.logRequest(req, info, code, time.Since(start))
}

// serveLimited serves req within its in-flight limit and its deadline.
func (s *Server) serveLimited(w http.ResponseWriter, req *http.Request, parts []string, long bool) {
	if long {
		s.serveAPI(w, req, parts, true)
		return
	}
	kind := requestKind(req)
	sem, ok := s.inflight.acquire(kind)
	if !ok {
		s.metrics.drop(kind)
		s.writeError(w, req, errTooManyRequests())
		return
	}
	defer release(sem)
	s.serveWithTimeout(w, req, func(w http.ResponseWriter, req *http.Request) { s.serveAPI(w, req, parts, false) })
}

// serveAPI authenticates, authorizes and dispatches a request.
func (s *Server) serveAPI(w http.ResponseWriter, req *http.Request, parts []string, long bool) {
	req, err := s.authenticate(req)
	if err == nil && !isResourcePath(parts) {
		err = s.authorizeNonResource(req)
	}
	if err != nil {
		if apierrors.IsUnauthorized(err) {
			// The client has nothing to keep the connection for.
			w.Header().Set("Connection", "close")
		}
		s.writeError(w, req, err)
		return
	}
	if long {
		s.logWatchStart(req)
	}
	switch {
	case len(parts) == 1 && parts[0] == "metrics" && s.metrics != nil:
		s.metrics.handler.ServeHTTP(w, req)
		return
	case len(parts) >= 2 && parts[0] == "openapi" && s.openapi.serve(w, req, parts):
		return
	}
	if accept := req.Header.Values("Accept"); !acceptsJSON(accept) && !wantsTable(accept) {
		if !wantsYAML(accept) || isWatch(req) {
			s.writeError(w, req, notAcceptable(req.Header.Get("Accept")))
			return
		}
		yw := &yamlWriter{ResponseWriter: w}
		defer yw.finish()
		w = yw
	}
	switch {
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
		if info := infoFrom(req.Context()); info != nil {
			info.verb, info.resource = verb(req, t), t.res.Plural
		}
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
		return t, apierrors.NewNotFound(schema.GroupResource{Group: group}, strings.Join(rest, "/"))
	}
	res := s.resources[group+"/"+version+"/"+rest[0]]
	if res == nil {
		return t, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: rest[0]}, "")
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
		return t, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: res.Plural},
			"(cluster-scoped resource under a namespace)")
	}
	if res.Namespaced && t.namespace == "" && t.name != "" {
		return t, apierrors.NewNotFound(schema.GroupResource{Group: group, Resource: res.Plural}, t.name)
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
