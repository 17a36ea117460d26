package manager_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/listwatch/listwatch/manager"
)

// probe returns the status code of GET path on m's probe handler.
func probe(t *testing.T, m *manager.Manager, path string) int {
	t.Helper()
	rr := httptest.NewRecorder()
	m.ProbeHandler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
	return rr.Code
}
