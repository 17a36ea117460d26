package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// HealthCheck is one named check of /readyz (and /healthz), served alone
// at /readyz/<Name>.
type HealthCheck struct {
	// Name names the check in the [+]/[-] lines, in /readyz/<Name> and in
	// ?exclude=<Name>.
	Name string
	// Check returns nil when healthy. Its context ends after
	// Config.HealthCheckTimeout.
	Check func(ctx context.Context) error
}

// isHealthPath reports whether parts name /livez, /readyz or /healthz or
// one of their checks.
func isHealthPath(parts []string) bool {
	return len(parts) >= 1 && len(parts) <= 2 && (parts[0] == "livez" || parts[0] == "readyz" || parts[0] == "healthz")
}

// healthChecks returns the checks of endpoint ("livez", "readyz" or
// "healthz"), named as kube-apiserver names its own. /livez is only ping:
// it must not fail because etcd or a cache is unavailable, since
// restarting the process cures neither and would make every replica
// relist at once. /readyz and /healthz add etcd (a quorum read through the
// first resource's storage), Config.ReadyChecks (replacing a built-in check
// of the same name), each resource's storage readiness (a cacher is ready
// once it has listed) and shutdown.
func (s *Server) healthChecks(endpoint string) []HealthCheck {
	checks := []HealthCheck{{"ping", func(context.Context) error { return nil }}}
	if endpoint == "livez" {
		return checks
	}
	checks = append(checks, HealthCheck{"etcd", func(ctx context.Context) error {
		_, err := s.cfg.Resources[0].Storage.GetCurrentResourceVersion(ctx)
		return err
	}})
	for _, r := range s.cfg.Resources {
		st := r.Storage
		checks = append(checks, HealthCheck{"resource-ready:" + strings.TrimSuffix(r.Plural+"."+r.Group, "."),
			func(context.Context) error { return st.ReadinessCheck() }})
	}
	checks = append(checks, HealthCheck{"shutdown", func(context.Context) error {
		select {
		case <-s.closing:
			return errors.New("the server is shutting down")
		default:
			return nil
		}
	}})
	for _, extra := range s.cfg.ReadyChecks {
		replaced := false
		for i := range checks {
			if checks[i].Name == extra.Name {
				checks[i], replaced = extra, true
			}
		}
		if !replaced {
			checks = append(checks, extra)
		}
	}
	return checks
}

// serveHealth answers /livez, /readyz and /healthz (parts[0]) and their
// single checks (/readyz/etcd), in kube-apiserver's format: "ok", or with
// ?verbose (or on failure) one "[+]name ok" / "[-]name failed: reason
// withheld" line per check (the reason goes to the log); ?exclude=name
// skips a check. Checks run concurrently, each bounded by
// HealthCheckTimeout. Failures answer 500.
func (s *Server) serveHealth(w http.ResponseWriter, req *http.Request, parts []string) {
	endpoint := parts[0]
	checks := s.healthChecks(endpoint)
	if len(parts) == 2 {
		var one []HealthCheck
		for _, c := range checks {
			if c.Name == parts[1] {
				one = []HealthCheck{c}
			}
		}
		if one == nil {
			http.Error(w, fmt.Sprintf("no check %q in /%s", parts[1], endpoint), http.StatusNotFound)
			return
		}
		checks = one
	}
	excluded := map[string]bool{}
	for _, e := range req.URL.Query()["exclude"] {
		excluded[e] = true
	}
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		if excluded[c.Name] {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(req.Context(), s.cfg.HealthCheckTimeout)
			defer cancel()
			errs[i] = c.Check(ctx)
		})
	}
	wg.Wait()
	var b strings.Builder
	failed := false
	for i, c := range checks {
		switch {
		case excluded[c.Name]:
			fmt.Fprintf(&b, "[+]%s excluded: ok\n", c.Name)
		case errs[i] != nil:
			failed = true
			s.log.Info("health check failed", "endpoint", endpoint, "check", c.Name, "err", errs[i])
			fmt.Fprintf(&b, "[-]%s failed: reason withheld\n", c.Name)
		default:
			fmt.Fprintf(&b, "[+]%s ok\n", c.Name)
		}
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
