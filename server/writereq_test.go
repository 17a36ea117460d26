package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// TestReadWrite: the one preamble of every write handler checks, per kind
// of write, the query (dryRun, force, fieldManager, fieldValidation) and
// the body (Content-Type, emptiness, size, YAML), in that order.
func TestReadWrite(t *testing.T) {
	s := &Server{cfg: Config{MaxRequestBodyBytes: 64}}
	const obj = `{"kind":"Widget"}`
	cases := []struct {
		name        string
		spec        writeSpec
		query       string
		contentType string
		body        string
		code        int // 0: accepted
		check       func(t *testing.T, wr *writeRequest)
	}{
		{name: "create", spec: objectWrite, query: "fieldManager=m&fieldValidation=Strict", contentType: mediaJSON, body: obj,
			check: func(t *testing.T, wr *writeRequest) {
				require.Equal(t, "m", wr.manager)
				require.Equal(t, "Strict", wr.fieldValidation)
				require.JSONEq(t, obj, string(wr.body))
			}},
		{name: "yaml becomes JSON", spec: objectWrite, contentType: mediaYAML, body: "kind: Widget\n",
			check: func(t *testing.T, wr *writeRequest) { require.JSONEq(t, obj, string(wr.body)) }},
		{name: "manager from User-Agent", spec: objectWrite, contentType: mediaJSON, body: obj,
			check: func(t *testing.T, wr *writeRequest) { require.Equal(t, "kubectl", wr.manager) }},
		{name: "dryRun first", spec: objectWrite, query: "dryRun=Some", contentType: "text/plain", body: obj, code: 400},
		{name: "wrong media type", spec: objectWrite, contentType: "text/plain", body: obj, code: 415},
		{name: "empty body", spec: objectWrite, contentType: mediaJSON, code: 400},
		{name: "too large", spec: objectWrite, contentType: mediaJSON, body: strings.Repeat(" ", 65), code: 413},
		{name: "bad fieldValidation", spec: objectWrite, query: "fieldValidation=Loud", contentType: mediaJSON, body: obj, code: 400},
		{name: "bad fieldManager", spec: objectWrite, query: "fieldManager=" + strings.Repeat("m", 129), contentType: mediaJSON, body: obj, code: 422},
		{name: "patch forbids force", spec: patchWrite, query: "force=true", contentType: mediaMergePatch, body: obj, code: 422},
		{name: "apply requires fieldManager", spec: applyWrite, contentType: mediaApplyPatch, body: "kind: Widget", code: 422},
		{name: "apply reads force", spec: applyWrite, query: "fieldManager=m&force=true", contentType: mediaApplyPatch, body: "kind: Widget",
			check: func(t *testing.T, wr *writeRequest) {
				require.True(t, wr.force)
				require.Equal(t, "kind: Widget", string(wr.body), "an apply patch is decoded by the apply")
			}},
		{name: "apply bad force", spec: applyWrite, query: "fieldManager=m&force=maybe", contentType: mediaApplyPatch, body: "kind: Widget", code: 400},
		{name: "scale has no fieldValidation", spec: scaleWrite, query: "fieldValidation=Loud", contentType: mediaJSON, body: obj},
		{name: "scale patch takes no JSON", spec: scalePatchWrite, contentType: mediaJSON, body: obj, code: 415},
		{name: "delete without body", spec: deleteWrite,
			check: func(t *testing.T, wr *writeRequest) { require.Nil(t, wr.body) }},
		{name: "delete has no fieldManager", spec: deleteWrite, query: "fieldManager=" + strings.Repeat("m", 129)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/x?"+c.query, strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.contentType)
			req.Header.Set("User-Agent", "kubectl/v1.34")
			wr, err := s.readWrite(httptest.NewRecorder(), req, c.spec)
			if c.code != 0 {
				var st apierrors.APIStatus
				require.ErrorAs(t, err, &st)
				require.EqualValues(t, c.code, st.Status().Code, err.Error())
				return
			}
			require.NoError(t, err)
			if c.check != nil {
				c.check(t, wr)
			}
		})
	}
}
