package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// healthCheckTimeout bounds one health check (the etcd round trip).
const healthCheckTimeout = 2 * time.Second

// healthCheck is one named check of /livez, /readyz and /healthz.
type healthCheck struct {
	name  string
	check func(ctx context.Context) error
}

// healthChecks returns the checks of endpoint ("livez", "readyz" or
// "healthz"), as kube-apiserver names its own: ping, etcd (a quorum read
// through the first resource's storage), and for readiness each resource's
// storage readiness (a cacher is ready once it has listed) and shutdown.
func (s *Server) healthChecks(endpoint string) []healthCheck {
	checks := []healthCheck{
		{"ping", func(context.Context) error { return nil }},
		{"etcd", func(ctx context.Context) error {
			_, err := s.cfg.Resources[0].Storage.GetCurrentResourceVersion(ctx)
			return err
		}},
	}
	if endpoint == "livez" {
		return checks
	}
	for _, r := range s.cfg.Resources {
		st := r.Storage
		checks = append(checks, healthCheck{"resource-ready:" + strings.TrimSuffix(r.Plural+"."+r.Group, "."),
			func(context.Context) error { return st.ReadinessCheck() }})
	}
	return append(checks, healthCheck{"shutdown", func(context.Context) error {
		select {
		case <-s.closing:
			return errors.New("the server is shutting down")
		default:
			return nil
		}
	}})
}

// serveHealth answers /livez, /readyz and /healthz (parts[0]) and their
// single checks (/readyz/etcd), in kube-apiserver's format: "ok", or with
// ?verbose (or on failure) one "[+]name ok" / "[-]name failed" line per
// check; ?exclude=name skips a check. Failures answer 500.
func (s *Server) serveHealth(w http.ResponseWriter, req *http.Request, parts []string) {
	endpoint := parts[0]
	checks := s.healthChecks(endpoint)
	if len(parts) == 2 {
		for _, c := range checks {
			if c.name == parts[1] {
				checks = []healthCheck{c}
				break
			}
		}
		if len(checks) != 1 || checks[0].name != parts[1] {
			http.Error(w, fmt.Sprintf("no check %q in /%s", parts[1], endpoint), http.StatusNotFound)
			return
		}
	}
	excluded := map[string]bool{}
	for _, e := range req.URL.Query()["exclude"] {
		excluded[e] = true
	}
	ctx, cancel := context.WithTimeout(req.Context(), healthCheckTimeout)
	defer cancel()
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if excluded[c.name] {
			fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.name)
			continue
		}
		if err := c.check(ctx); err != nil {
			failed = true
			s.log.Info("health check failed", "endpoint", endpoint, "check", c.name, "err", err)
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.name)
			continue
		}
		fmt.Fprintf(&b, "[+]%s ok\n", c.name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, verbose := req.URL.Query()["verbose"]
	switch {
	case failed:
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", b.String(), endpoint)
	case verbose:
		fmt.Fprintf(w, "%s%s check passed\n", b.String(), endpoint)
	default:
		fmt.Fprint(w, "ok")
	}
}
