package manager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
// check and the leader status. /healthz checks that Run is running and has
// not failed or lost leadership; /readyz also that every started informer
// of Informers() has synced.
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
		out = append(out, namedCheck{"informers-synced", m.checkSynced})
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

// checkSynced fails while a started informer has not synced.
func (m *Manager) checkSynced(*http.Request) error {
	now, cancel := context.WithCancel(context.Background())
	cancel() // report the current state, do not wait
	var pending []string
	for res, ok := range m.informers.WaitForCacheSync(now) {
		if !ok {
			pending = append(pending, formatResource(res))
		}
	}
	if len(pending) > 0 {
		sort.Strings(pending)
		return fmt.Errorf("informers not synced: %s", strings.Join(pending, ", "))
	}
	return nil
}

func formatResource(r schema.GroupVersionResource) string {
	return r.Resource + "." + r.Version + "." + r.Group
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
		fmt.Fprintf(w, "%sleader: %s\n%s check passed\n", b.String(), m.leaderStatus(), strings.TrimPrefix(r.URL.Path, "/"))
		return
	}
	fmt.Fprint(w, "ok")
}

// leaderStatus is "true", "false" or "disabled" (no leader election).
func (m *Manager) leaderStatus() string {
	if m.election == nil {
		return "disabled"
	}
	if m.IsLeader() {
		return "true"
	}
	return "false"
}
