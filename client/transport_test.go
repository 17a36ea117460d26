package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/transport"
)

// TestHTTPSharesRateLimitWithListerWatcher: a client and a ListerWatcher
// given one *transport.Transport spend one bucket; once it is empty, a
// call whose turn comes after its deadline fails at once with the typed
// error, on either.
func TestHTTPSharesRateLimitWithListerWatcher(t *testing.T) {
	kinds := newKinds(t)
	url := serve(t, kinds)
	rt, err := transport.New(transport.Config{Base: &http.Transport{}, QPS: 0.001, Burst: 2}) // then a token every ~17 min
	require.NoError(t, err)
	hc := &http.Client{Transport: rt}
	defer hc.CloseIdleConnections()
	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: url, Kinds: kinds, HTTPClient: hc})
	require.NoError(t, err)
	kind, err := kinds.KindFor(&widget.Widget{})
	require.NoError(t, err)
	lw, err := httplw.New(httplw.Config{BaseURL: url, Group: kind.GroupVersionKind.Group,
		Version: kind.GroupVersionKind.Version, Plural: kind.Resource, HTTPClient: hc})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, c.Create(ctx, widget.NewWidget("default", "w1")))
	_, err = lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)

	err = c.Get(ctx, client.Key("default", "w1"), &widget.Widget{})
	require.ErrorIs(t, err, transport.ErrThrottled)
	assert.False(t, client.IsNotFound(err) || client.IsTooManyRequests(err), "a client-side error: %v", err)
	_, err = lw.List(ctx, metav1.ListOptions{})
	require.ErrorIs(t, err, transport.ErrThrottled)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, ctx.Err(), "both failed at once, not at the deadline")
}
