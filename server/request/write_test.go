package request

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/server/wire"
	"github.com/listwatch/listwatch/storage"
)

// TestReadWrite: the one preamble of every write handler checks, per kind
// of write, the query (dryRun, force, fieldManager, fieldValidation) and
// the body (Content-Type, emptiness, size, YAML), in that order.
func TestReadWrite(t *testing.T) {
	const obj = `{"kind":"Widget"}`
	cases := []struct {
		name        string
		spec        WriteSpec
		query       string
		contentType string
		body        string
		code        int // 0: accepted
		check       func(t *testing.T, wr *Write)
	}{
		{name: "create", spec: ObjectWrite, query: "fieldManager=m&fieldValidation=Strict", contentType: wire.MediaJSON, body: obj,
			check: func(t *testing.T, wr *Write) {
				require.Equal(t, "m", wr.Manager)
				require.Equal(t, "Strict", wr.FieldValidation)
				require.JSONEq(t, obj, string(wr.Body))
			}},
		{name: "yaml becomes JSON", spec: ObjectWrite, contentType: wire.MediaYAML, body: "kind: Widget\n",
			check: func(t *testing.T, wr *Write) { require.JSONEq(t, obj, string(wr.Body)) }},
		{name: "manager from User-Agent", spec: ObjectWrite, contentType: wire.MediaJSON, body: obj,
			check: func(t *testing.T, wr *Write) { require.Equal(t, "kubectl", wr.Manager) }},
		{name: "dryRun first", spec: ObjectWrite, query: "dryRun=Some", contentType: "text/plain", body: obj, code: 400},
		{name: "no Content-Type is JSON", spec: ObjectWrite, body: obj,
			check: func(t *testing.T, wr *Write) { require.JSONEq(t, obj, string(wr.Body)) }},
		{name: "no Content-Type is no patch", spec: ScalePatchWrite, body: obj, code: 415},
		{name: "wrong media type", spec: ObjectWrite, contentType: "text/plain", body: obj, code: 415},
		{name: "empty body", spec: ObjectWrite, contentType: wire.MediaJSON, code: 400},
		{name: "too large", spec: ObjectWrite, contentType: wire.MediaJSON, body: strings.Repeat(" ", 65), code: 413},
		{name: "bad fieldValidation", spec: ObjectWrite, query: "fieldValidation=Loud", contentType: wire.MediaJSON, body: obj, code: 400},
		{name: "bad fieldManager", spec: ObjectWrite, query: "fieldManager=" + strings.Repeat("m", 129), contentType: wire.MediaJSON, body: obj, code: 422},
		{name: "patch forbids force", spec: PatchWrite, query: "force=true", contentType: wire.MediaMergePatch, body: obj, code: 422},
		{name: "apply requires fieldManager", spec: ApplyWrite, contentType: wire.MediaApplyPatch, body: "kind: Widget", code: 422},
		{name: "apply reads force", spec: ApplyWrite, query: "fieldManager=m&force=true", contentType: wire.MediaApplyPatch, body: "kind: Widget",
			check: func(t *testing.T, wr *Write) {
				require.True(t, wr.Force)
				require.Equal(t, "kind: Widget", string(wr.Body), "an apply patch is decoded by the apply")
			}},
		{name: "apply bad force", spec: ApplyWrite, query: "fieldManager=m&force=maybe", contentType: wire.MediaApplyPatch, body: "kind: Widget", code: 400},
		{name: "scale has no fieldValidation", spec: ScaleWrite, query: "fieldValidation=Loud", contentType: wire.MediaJSON, body: obj},
		{name: "scale patch takes no JSON", spec: ScalePatchWrite, contentType: wire.MediaJSON, body: obj, code: 415},
		{name: "delete without body", spec: DeleteWrite,
			check: func(t *testing.T, wr *Write) { require.Nil(t, wr.Body) }},
		{name: "delete has no fieldManager", spec: DeleteWrite, query: "fieldManager=" + strings.Repeat("m", 129)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/x?"+c.query, strings.NewReader(c.body))
			req.Header.Set("Content-Type", c.contentType)
			req.Header.Set("User-Agent", "kubectl/v1.34")
			wr, err := ReadWrite(httptest.NewRecorder(), req, c.spec, 64)
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

// failingBody is a request body whose Read fails with err.
type failingBody struct{ err error }

func (f failingBody) Read([]byte) (int, error) { return 0, f.err }

// TestBodyReadErrors: a body that did not arrive by the server's read
// deadline is 408 Timeout, any other read failure 400; neither message
// names the sockets or quotes the network error.
func TestBodyReadErrors(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 6443}
	for _, tc := range []struct {
		err  error
		code int32
	}{
		{&net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: os.ErrDeadlineExceeded}, http.StatusRequestTimeout},
		{&net.OpError{Op: "read", Net: "tcp", Source: addr, Addr: addr, Err: syscall.ECONNRESET}, http.StatusBadRequest},
	} {
		req := httptest.NewRequest(http.MethodPost, "/x", io.NopCloser(failingBody{tc.err}))
		req.Header.Set("Content-Type", "application/json")
		_, _, err := readBody(httptest.NewRecorder(), req, 1<<20, false, "application/json")
		st := storage.StatusOf(err)
		if st.Code != tc.code || strings.Contains(st.Message, "10.1.2.3") || strings.Contains(st.Message, "reset") {
			t.Errorf("%v: %d %q, want %d naming no socket or network error", tc.err, st.Code, st.Message, tc.code)
		}
	}
}
