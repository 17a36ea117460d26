package httplw

import (
	"net/url"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EncodeListOptions returns the query parameters of opts as the Kubernetes
// API spells them, omitting zero values.
func EncodeListOptions(opts metav1.ListOptions) url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("labelSelector", opts.LabelSelector)
	set("fieldSelector", opts.FieldSelector)
	set("shardSelector", opts.ShardSelector)
	set("resourceVersion", opts.ResourceVersion)
	set("resourceVersionMatch", string(opts.ResourceVersionMatch))
	set("continue", opts.Continue)
	if opts.Watch {
		q.Set("watch", "true")
	}
	if opts.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if opts.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*opts.SendInitialEvents))
	}
	if opts.Limit > 0 {
		q.Set("limit", strconv.FormatInt(opts.Limit, 10))
	}
	if opts.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*opts.TimeoutSeconds, 10))
	}
	return q
}
