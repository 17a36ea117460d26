package server

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/storage"
)

// listParams are the parsed query parameters of a list or watch.
type listParams struct {
	watch         bool
	rv            string
	rvMatch       metav1.ResourceVersionMatch
	limit         int64
	cont          string
	label         labels.Selector
	field         fields.Selector
	bookmarks     bool
	initialEvents *bool
	timeout       time.Duration // 0: none given
	// shard is the parsed shardSelector (nil: none); shardExpr as given.
	shard     sharding.Selector
	shardExpr string
}

// parseListParams parses q. Malformed values are 400 BadRequest; valid
// values that do not go together are 422 Invalid (kind ListOptions), as
// Kubernetes answers.
func parseListParams(q url.Values, r *resource) (*listParams, error) {
	p := &listParams{
		rv:      q.Get("resourceVersion"),
		rvMatch: metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		cont:    q.Get("continue"),
	}
	var err error
	if p.watch, err = parseBool(q, "watch"); err != nil {
		return nil, err
	}
	if p.bookmarks, err = parseBool(q, "allowWatchBookmarks"); err != nil {
		return nil, err
	}
	if q.Has("sendInitialEvents") {
		v, err := parseBool(q, "sendInitialEvents")
		if err != nil {
			return nil, err
		}
		p.initialEvents = &v
	}
	if p.limit, err = parseNonNegative(q, "limit"); err != nil {
		return nil, err
	}
	secs, err := parseNonNegative(q, "timeoutSeconds")
	if err != nil {
		return nil, err
	}
	p.timeout = time.Duration(secs) * time.Second
	if p.label, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, badRequest(fmt.Sprintf("unable to parse labelSelector: %v", err))
	}
	if p.field, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return nil, badRequest(fmt.Sprintf("unable to parse fieldSelector: %v", err))
	}
	for _, req := range p.field.Requirements() {
		if !r.fields[req.Field] {
			return nil, badRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	if q.Has("shardSelector") {
		if p.shard, err = storage.ParseShardSelector(q.Get("shardSelector")); err != nil {
			return nil, badRequest(err.Error())
		}
		p.shardExpr = p.shard.String()
	}
	if errs := p.validate(); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return p, nil
}

// validate applies Kubernetes' ListOptions rules.
func (p *listParams) validate() field.ErrorList {
	var errs field.ErrorList
	rvm := field.NewPath("resourceVersionMatch")
	switch p.rvMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		errs = append(errs, field.NotSupported(rvm, p.rvMatch, []string{
			string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	if p.watch {
		if p.initialEvents != nil {
			if !p.bookmarks {
				errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"),
					"sendInitialEvents requires setting allowWatchBookmarks=true"))
			}
			if p.rvMatch != metav1.ResourceVersionMatchNotOlderThan {
				errs = append(errs, field.Forbidden(rvm,
					"sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
			}
		} else if p.rvMatch != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		return errs
	}
	if p.initialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if p.rvMatch != "" {
		if p.rv == "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if p.cont != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if p.rvMatch == metav1.ResourceVersionMatchExact && p.rv == "0" {
			errs = append(errs, field.Forbidden(rvm, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if p.cont != "" && p.rv != "" && p.rv != "0" {
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersion"),
			"specifying resource version is not allowed when using continue"))
	}
	return errs
}

// predicate is the selection predicate of the request.
func (p *listParams) predicate(r *resource) storage.SelectionPredicate {
	return storage.SelectionPredicate{
		Label: p.label, Field: p.field, GetAttrs: r.GetAttrs,
		Limit: p.limit, Continue: p.cont, AllowWatchBookmarks: p.bookmarks, Shard: p.shard,
	}
}

// parseBool accepts true/false/1/0 (and their strconv spellings); absent
// is false.
func parseBool(q url.Values, name string) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, badRequest(fmt.Sprintf("invalid value %q for %s: must be true or false", s, name))
	}
	return v, nil
}

func parseNonNegative(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, badRequest(fmt.Sprintf("invalid value %q for %s: must be a non-negative integer", s, name))
	}
	return v, nil
}

// checkResourceVersionRange answers a resourceVersion beyond any etcd
// revision (above 2^63-1, which the store cannot even parse) as Kubernetes
// answers a too-new one: 504 "Too large resource version", with the current
// revision, instead of a 400.
func checkResourceVersionRange(ctx context.Context, r *resource, rv string) error {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil || n <= math.MaxInt64 {
		return nil
	}
	cur, err := r.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return err
	}
	st := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", n, cur), 1)
	st.ErrStatus.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
	return st
}
