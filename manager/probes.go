package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Check is a health or readiness check: nil means healthy.
type Check func(r *http.Request) error

type namedCheck struct {
	name  string
	check Check
}

// AddHealthzCheck adds a check to /healthz.
func (m *Manager) AddHealthzCheck(name string, c Check) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.healthz = append(m.healthz, namedCheck{name, c})
}

// AddReadyzCheck adds a check to /readyz.
func (m *Manager) AddReadyzCheck(name string, c Check) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.readyz = append(m.readyz, namedCheck{name, c})
}

// ProbeHandler serves GET /healthz and /readyz: 200 "ok" when every check
// passes, 500 listing the failed ones otherwise; ?verbose lists every
// check and who leads. /healthz checks that Run is running and has not
// failed or lost leadership; /readyz also that the manager's cachers are
// ready, every informer of its cache has synced, and (caches-fresh) that
// an elected replica's wait for fresh caches has not run out of
// Options.FreshnessTimeout (see the package doc).
func (m *Manager) ProbeHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		m.serveChecks(w, r, m.checks(false))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		m.serveChecks(w, r, m.checks(true))
	})
	return mux
}

// checks returns the built-in checks followed by the added ones.
func (m *Manager) checks(ready bool) []namedCheck {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []namedCheck{{"manager", m.checkRunning}}
	if ready {
		if b, ok := m.backend.(*localBackend); ok {
			out = append(out, namedCheck{"cachers-ready", func(*http.Request) error { return b.readiness() }})
		}
		out = append(out, namedCheck{"informers-synced", m.checkSynced}, namedCheck{"caches-fresh", m.checkFresh})
		return append(out, m.readyz...)
	}
	return append(out, m.healthz...)
}

// checkRunning fails unless Run is running.
func (m *Manager) checkRunning(*http.Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state {
	case stateNew:
		return errors.New("not started")
	case stateStopped:
		if m.runErr != nil {
			return fmt.Errorf("stopped: %w", m.runErr)
		}
		return errors.New("stopped")
	}
	return nil
}

// checkSynced fails while an informer of the cache has not synced.
func (m *Manager) checkSynced(*http.Request) error {
	if pending := m.cache.Unsynced(); len(pending) > 0 {
		return fmt.Errorf("informers not synced: %s", strings.Join(pending, ", "))
	}
	return nil
}

// checkFresh fails while an elected replica waits for fresh caches and an
// attempt has run out of FreshnessTimeout.
func (m *Manager) checkFresh(*http.Request) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.freshErr
}

// serveChecks runs checks and writes the Kubernetes-style probe answer.
func (m *Manager) serveChecks(w http.ResponseWriter, r *http.Request, checks []namedCheck) {
	var b strings.Builder
	failed := false
	for _, c := range checks {
		if err := c.check(r); err != nil {
			failed = true
			fmt.Fprintf(&b, "[-]%s failed: %v\n", c.name, err)
			m.log.Info("probe check failed", "path", r.URL.Path, "check", c.name, "err", err)
			continue
		}
		fmt.Fprintf(&b, "[+]%s ok\n", c.name)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if failed {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%s%s check failed\n", b.String(), strings.TrimPrefix(r.URL.Path, "/"))
		return
	}
	if _, verbose := r.URL.Query()["verbose"]; verbose {
		fmt.Fprintf(w, "%sleader: %s\n%s check passed\n", b.String(), m.leaderStatus(r.Context()), strings.TrimPrefix(r.URL.Path, "/"))
		return
	}
	fmt.Fprint(w, "ok")
}

// leaderStatus says whether this replica leads and who does: "disabled"
// (no leader election), "true (identity ...)", "elected, waiting for fresh
// caches ...", or "false (leader: identity ...)" as read from etcd (or why
// it could not be read).
func (m *Manager) leaderStatus(ctx context.Context) string {
	if m.election == nil {
		return "disabled"
	}
	if m.IsLeader() {
		return fmt.Sprintf("true (identity %s)", m.election.Identity)
	}
	if m.awaitingFresh() {
		return fmt.Sprintf("elected, waiting for fresh caches before starting (identity %s)", m.election.Identity)
	}
	ctx, cancel := context.WithTimeout(ctx, m.election.RenewDeadline) // a bound etcd reads are held to
	defer cancel()
	l, err := CurrentLeader(ctx, m.election.Client, m.election.Key)
	if err != nil {
		return fmt.Sprintf("false (identity %s; leader unknown: %v)", m.election.Identity, err)
	}
	return fmt.Sprintf("false (identity %s; leader: %s)", m.election.Identity, l.Identity)
}
