package k8scompat

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/features"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	utilfeature "k8s.io/apiserver/pkg/util/feature"

	lwstorage "github.com/listwatch/listwatch/storage"
)

// errShardingUnsupported is returned for requests with a shard selector:
// listwatch has no notion of shards, and silently ignoring the selector would
// return objects outside the requested shard.
var errShardingUnsupported = errors.New("k8scompat: shard selectors (ShardedListAndWatch) are not supported by listwatch storage")

// toPredicate converts a Kubernetes selection predicate. Every field has a
// listwatch counterpart except ShardSelector, which is rejected when the
// ShardedListAndWatch feature would make it effective.
func toPredicate(p k8sstorage.SelectionPredicate) (lwstorage.SelectionPredicate, error) {
	if p.ShardSelector != nil && !p.ShardSelector.Empty() &&
		utilfeature.DefaultFeatureGate.Enabled(features.ShardedListAndWatch) {
		return lwstorage.SelectionPredicate{}, apiBadRequest(errShardingUnsupported)
	}
	out := lwstorage.SelectionPredicate{
		Label:               p.Label,
		Field:               p.Field,
		IndexLabels:         p.IndexLabels,
		IndexFields:         p.IndexFields,
		Limit:               p.Limit,
		Continue:            p.Continue,
		AllowWatchBookmarks: p.AllowWatchBookmarks,
	}
	if p.GetAttrs != nil {
		out.GetAttrs = lwstorage.AttrFunc(p.GetAttrs)
	}
	return out, nil
}

// toListOptions converts Kubernetes list/watch options, parsing the RV
// (malformed: 400 Bad Request, as listwatch answers bad input). It cannot be
// storage.ListOptionsFrom: that translates a client's metav1.ListOptions
// (selectors as strings, validated as the API validates them), while these
// options arrive past the API layer, with parsed selectors, GetAttrs and
// index fields that have no string form, and with combinations Kubernetes'
// storage accepts (its watch tests send sendInitialEvents=true with
// allowWatchBookmarks=false, which ListOptionsFrom refuses with 422).
//
// ProgressNotify: Kubernetes delivers storage progress notifications as
// bookmarks whenever ProgressNotify is set, independently of
// Predicate.AllowWatchBookmarks; listwatch delivers them only when the
// predicate also allows bookmarks, so the adapter allows them.
//
// RecordTimestamps (an internal latency-telemetry hook of Kubernetes' own
// watch cache) has no listwatch counterpart: objects are never wrapped,
// which consumers must (and Kubernetes' cacher does) accept.
func toListOptions(o k8sstorage.ListOptions) (lwstorage.ListOptions, error) {
	pred, err := toPredicate(o.Predicate)
	if err != nil {
		return lwstorage.ListOptions{}, err
	}
	if o.ProgressNotify {
		pred.AllowWatchBookmarks = true
	}
	rv, err := lwstorage.ParseRV(o.ResourceVersion)
	if err != nil {
		return lwstorage.ListOptions{}, toK8s(err, opOther)
	}
	return lwstorage.ListOptions{
		ResourceVersion:      rv,
		ResourceVersionMatch: o.ResourceVersionMatch,
		Predicate:            pred,
		Recursive:            o.Recursive,
		ProgressNotify:       o.ProgressNotify,
		SendInitialEvents:    o.SendInitialEvents,
	}, nil
}

// toGetOptions converts Kubernetes get options; a malformed RV is 400 Bad
// Request, as listwatch answers bad input.
func toGetOptions(o k8sstorage.GetOptions) (lwstorage.GetOptions, error) {
	rv, err := lwstorage.ParseRV(o.ResourceVersion)
	if err != nil {
		return lwstorage.GetOptions{}, toK8s(err, opOther)
	}
	return lwstorage.GetOptions{IgnoreNotFound: o.IgnoreNotFound, ResourceVersion: rv}, nil
}

func toPreconditions(p *k8sstorage.Preconditions) *lwstorage.Preconditions {
	if p == nil {
		return nil
	}
	return &lwstorage.Preconditions{UID: p.UID, ResourceVersion: p.ResourceVersion}
}

func toUpdateFunc(f k8sstorage.UpdateFunc) lwstorage.UpdateFunc {
	if f == nil {
		return nil
	}
	return func(in runtime.Object, res lwstorage.ResponseMeta) (runtime.Object, *uint64, error) {
		return f(in, k8sstorage.ResponseMeta{TTL: res.TTL, ResourceVersion: res.ResourceVersion})
	}
}

func toValidateFunc(f k8sstorage.ValidateObjectFunc) lwstorage.ValidateObjectFunc {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, obj runtime.Object) error { return f(ctx, obj) }
}
