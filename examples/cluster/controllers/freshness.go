package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// syncedTo is an informer's LastSyncResourceVersion.
type syncedTo func() string

// WaitFresh waits until each informer has caught up with the API's
// current state of its resource: it reads the resource's current
// resourceVersion (a one-item consistent list), then waits until the
// informer has applied an event or bookmark at least that recent.
//
// A new leader runs it before its controllers act. Its informers ran on
// the standby, but may still lack the last writes of the deposed leader;
// expectations start empty in a new process, so acting on such a cache
// would create again the pods the old leader created just before it
// stopped. (kube-controller-manager starts its informers after winning
// the election, and their first consistent list has the same effect.)
func WaitFresh(ctx context.Context, c *api.Client, informers map[api.Kind]syncedTo) error {
	for k, synced := range informers {
		want, err := currentRV(ctx, c, k)
		if err != nil {
			return err
		}
		tick := time.NewTicker(10 * time.Millisecond)
		for {
			got, _ := strconv.ParseUint(synced(), 10, 64)
			if got >= want {
				break
			}
			select {
			case <-ctx.Done():
				tick.Stop()
				return fmt.Errorf("controllers: the %s informer did not reach resourceVersion %d: %w", k.Plural, want, ctx.Err())
			case <-tick.C:
			}
		}
		tick.Stop()
	}
	return nil
}

// currentRV reads k's current resourceVersion with a consistent list of
// one item.
func currentRV(ctx context.Context, c *api.Client, k api.Kind) (uint64, error) {
	p := "/apis/" + k.Group + "/" + k.Version + "/" + k.Plural + "?limit=1"
	if k.Group == "" {
		p = "/api/" + k.Version + "/" + k.Plural + "?limit=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL()+p, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		return 0, fmt.Errorf("controllers: listing %s: %w", k.Plural, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("controllers: listing %s: %s", k.Plural, resp.Status)
	}
	var l metav1.PartialObjectMetadataList
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return 0, fmt.Errorf("controllers: listing %s: %w", k.Plural, err)
	}
	return strconv.ParseUint(l.ResourceVersion, 10, 64)
}
