package gc_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/gc"
	"github.com/listwatch/listwatch/reflector"
)

// TestNewRefusesBadConfig: a collector needs a client and a cache, and no
// negative Workers; it runs on the leader only.
func TestNewRefusesBadConfig(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	ch, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) {
		return nil, nil
	}})
	require.NoError(t, err)
	_, err = gc.New(gc.Config{Cache: ch})
	require.Error(t, err, "no Client")
	g, err := gc.New(gc.Config{Client: fakeClient{}, Cache: ch})
	require.NoError(t, err, "no kinds: collects nothing, but is valid")
	require.True(t, g.NeedLeaderElection())
	_, err = gc.New(gc.Config{Client: fakeClient{}, Cache: ch, Workers: -1})
	require.Error(t, err)
}

// fakeClient is a client.Client that New only holds.
type fakeClient struct{ client.Client }
