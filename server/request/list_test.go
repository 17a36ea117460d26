package request

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var selectable = map[string]bool{"metadata.name": true, "metadata.namespace": true, "spec.nodeName": true}

// code is the HTTP status of a parse error (0 for none, -1 for an error
// that is not an API status).
func code(err error) int32 {
	if err == nil {
		return 0
	}
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		return -1
	}
	return st.Status().Code
}

// TestParseList: every parameter is read; malformed values are 400,
// combinations Kubernetes' ListOptions validation forbids are 422.
func TestParseList(t *testing.T) {
	q, err := url.ParseQuery("watch=1&resourceVersion=5&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true" +
		"&sendInitialEvents=false&timeoutSeconds=30&labelSelector=app%3Da&fieldSelector=spec.nodeName%3Dn1&limit=7")
	require.NoError(t, err)
	p, err := ParseList(q, selectable, nil)
	require.NoError(t, err)
	require.True(t, p.Watch)
	o := p.Options
	require.True(t, o.Predicate.AllowWatchBookmarks)
	require.Equal(t, "5", o.ResourceVersion.String())
	require.Equal(t, metav1.ResourceVersionMatchNotOlderThan, o.ResourceVersionMatch)
	require.NotNil(t, o.SendInitialEvents)
	require.False(t, *o.SendInitialEvents)
	require.Equal(t, 30*time.Second, p.Timeout)
	require.Zero(t, o.Predicate.Limit, "a watch has no limit")
	require.True(t, o.Recursive)
	require.Equal(t, "app=a", o.Predicate.Label.String())
	require.Equal(t, "spec.nodeName=n1", o.Predicate.Field.String())

	q, err = url.ParseQuery("limit=7&continue=abc&shardSelector=" + url.QueryEscape("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"))
	require.NoError(t, err)
	p, err = ParseList(q, selectable, nil)
	require.NoError(t, err)
	require.Equal(t, int64(7), p.Options.Predicate.Limit)
	require.Equal(t, "abc", p.Options.Predicate.Continue)
	require.NotNil(t, p.Options.Predicate.Shard)
	require.NotEmpty(t, p.ShardExpr)

	for query, want := range map[string]int32{
		"":                             0,
		"watch=yes":                    400,
		"limit=-1":                     400,
		"timeoutSeconds=x":             400,
		"labelSelector=a%20in":         400,
		"fieldSelector=spec.other%3Dx": 400,
		"resourceVersionMatch=Exact":   422,
		"resourceVersionMatch=Exact&resourceVersion=0": 422,
		"resourceVersionMatch=Bogus&resourceVersion=1": 422,
		"sendInitialEvents=true":                       422,
		"watch=1&sendInitialEvents=true":               422,
		"watch=1&resourceVersionMatch=NotOlderThan":    422,
		"continue=abc&resourceVersion=5":               422,
		"continue=abc&resourceVersion=0":               0,
		"shardSelector=":                               400,
	} {
		q, err := url.ParseQuery(query)
		require.NoError(t, err)
		_, err = ParseList(q, selectable, nil)
		require.Equal(t, want, code(err), "%s: %v", query, err)
	}
}

// FuzzListParams: any query string parses to parameters or an API error
// (400 or 422), never a panic.
func FuzzListParams(f *testing.F) {
	for _, s := range []string{
		"watch=true&resourceVersion=5&allowWatchBookmarks=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
		"labelSelector=app%20in%20(a,b),!tier&fieldSelector=spec.nodeName%3Dn1,metadata.name!%3Dx&limit=5&continue=abc",
		"timeoutSeconds=-1", "limit=9999999999999999999999", "fieldSelector=a%3D%3D%3D", "resourceVersionMatch=Exact&resourceVersion=0",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if _, err := ParseList(q, selectable, nil); err != nil {
			if c := code(err); c != 400 && c != 422 {
				t.Fatalf("query %q: status %d, want 400 or 422", raw, c)
			}
		}
	})
}
