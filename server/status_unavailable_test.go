package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// TestEtcdUnavailableAnswers503WithRetryAfter: with the etcd under the
// widgets' store stopped, a consistent list, a get and a create each
// answer 503 ServiceUnavailable with Retry-After within the store's request
// timeout (the create fails before it is sent: a retry is safe), and the
// Status says etcd is unavailable, naming neither its endpoint nor the
// dial error (those are logged).
func TestEtcdUnavailableAnswers503WithRetryAfter(t *testing.T) {
	srv, err := embedtest.StartServer(embedtest.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer srv.Close()
	cli, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: srv.Endpoints})
	require.NoError(t, err)
	defer cli.Close()
	st, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets", RequestTimeout: 500 * time.Millisecond})
	require.NoError(t, err)
	defer st.Close()
	f := newFixture(t, func(c *Config) { c.Resources[0] = widgets(st) })
	srv.Close()

	col := "/apis/" + group + "/v1/namespaces/default/widgets"
	body := map[string]any{"apiVersion": group + "/v1", "kind": "Widget", "metadata": map[string]any{"name": "w2"}}
	for _, tc := range []struct {
		name, method, path string
		body               any
	}{
		{"consistent list", http.MethodGet, col, nil},
		{"get", http.MethodGet, col + "/w1", nil},
		{"create", http.MethodPost, col, body},
	} {
		start := time.Now()
		r := f.do(tc.method, tc.path, "application/json", tc.body)
		took := time.Since(start)
		require.Equal(t, http.StatusServiceUnavailable, r.code, "%s: %s", tc.name, r.body)
		require.NotEmpty(t, r.header.Get("Retry-After"), tc.name)
		var s metav1.Status
		require.NoError(t, json.Unmarshal(r.body, &s))
		require.Equal(t, metav1.StatusReasonServiceUnavailable, s.Reason)
		require.Equal(t, "etcd is unavailable", s.Message, "the endpoint and the dial error are for the log")
		require.Less(t, took, 3*time.Second, tc.name)
		t.Logf("%s: %d after %v: %s", tc.name, r.code, took.Round(time.Millisecond), s.Message)
	}
}

// TestTimeoutStatusHasNoRetryAfter: a storage timeout and a context
// deadline are 504 without Retry-After (a write's outcome is unknown, a
// retry could apply it twice, as kube-apiserver answers); a not-found has
// none either.
func TestTimeoutStatusHasNoRetryAfter(t *testing.T) {
	for _, err := range []error{
		&storage.Error{Code: storage.CodeTimeout, Msg: "get"},
		storage.NewOutcomeUnknownError([]string{"http://127.0.0.1:2379"}, errors.New("no answer within 10s")),
		fmt.Errorf("list: %w", context.DeadlineExceeded),
	} {
		st := statusFor(err)
		require.Equal(t, int32(http.StatusGatewayTimeout), st.Code, err.Error())
		require.True(t, st.Details == nil || st.Details.RetryAfterSeconds == 0, err.Error())
		require.NotContains(t, st.Message, "127.0.0.1", err.Error())
	}
	st := statusFor(storage.NewNotFoundError("/widgets/ns/a", 0))
	require.True(t, st.Details == nil || st.Details.RetryAfterSeconds == 0)
}
