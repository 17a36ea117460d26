package request

import (
	"fmt"
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

// ListParams are the parsed query parameters of a list or watch.
type ListParams struct {
	// Watch is watch=true (or 1).
	Watch bool
	// ResourceVersion and ResourceVersionMatch are as given.
	ResourceVersion      string
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Limit is the page size (0: no limit); Continue the continue token.
	Limit    int64
	Continue string
	// Label and Field are the parsed selectors (empty ones match all).
	Label labels.Selector
	Field fields.Selector
	// AllowWatchBookmarks is allowWatchBookmarks.
	AllowWatchBookmarks bool
	// SendInitialEvents is sendInitialEvents (nil: not given).
	SendInitialEvents *bool
	// Timeout is timeoutSeconds (0: none given).
	Timeout time.Duration
	// Shard is the parsed shardSelector (nil: none); ShardExpr its
	// canonical form.
	Shard     sharding.Selector
	ShardExpr string
}

// ParseList parses q, the query of a list or watch of a resource whose
// selectable field labels are selectable. Malformed values are 400
// BadRequest, as is a field selector on a field not selectable; valid
// values that do not go together are 422 Invalid (kind ListOptions), as
// Kubernetes answers.
func ParseList(q url.Values, selectable map[string]bool) (*ListParams, error) {
	p := &ListParams{
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		Continue:             q.Get("continue"),
	}
	var err error
	if p.Watch, err = ParseBool(q, "watch"); err != nil {
		return nil, err
	}
	if p.AllowWatchBookmarks, err = ParseBool(q, "allowWatchBookmarks"); err != nil {
		return nil, err
	}
	if q.Has("sendInitialEvents") {
		v, err := ParseBool(q, "sendInitialEvents")
		if err != nil {
			return nil, err
		}
		p.SendInitialEvents = &v
	}
	if p.Limit, err = parseNonNegative(q, "limit"); err != nil {
		return nil, err
	}
	secs, err := parseNonNegative(q, "timeoutSeconds")
	if err != nil {
		return nil, err
	}
	p.Timeout = time.Duration(secs) * time.Second
	if p.Label, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse labelSelector: %v", err))
	}
	if p.Field, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("unable to parse fieldSelector: %v", err))
	}
	for _, req := range p.Field.Requirements() {
		if !selectable[req.Field] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s", req.Field))
		}
	}
	if q.Has("shardSelector") {
		if p.Shard, err = storage.ParseShardSelector(q.Get("shardSelector")); err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		p.ShardExpr = p.Shard.String()
	}
	if errs := p.validate(); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", errs)
	}
	return p, nil
}

// validate applies Kubernetes' ListOptions rules.
func (p *ListParams) validate() field.ErrorList {
	var errs field.ErrorList
	rvm := field.NewPath("resourceVersionMatch")
	switch p.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		errs = append(errs, field.NotSupported(rvm, p.ResourceVersionMatch, []string{
			string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	if p.Watch {
		if p.SendInitialEvents != nil {
			if !p.AllowWatchBookmarks {
				errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"),
					"sendInitialEvents requires setting allowWatchBookmarks=true"))
			}
			if p.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
				errs = append(errs, field.Forbidden(rvm,
					"sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
			}
		} else if p.ResourceVersionMatch != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		return errs
	}
	if p.SendInitialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if p.ResourceVersionMatch != "" {
		if p.ResourceVersion == "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if p.Continue != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if p.ResourceVersionMatch == metav1.ResourceVersionMatchExact && p.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(rvm, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if p.Continue != "" && p.ResourceVersion != "" && p.ResourceVersion != "0" {
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersion"),
			"specifying resource version is not allowed when using continue"))
	}
	return errs
}

// Predicate is the selection predicate of the request, over the label
// and field sets getAttrs returns.
func (p *ListParams) Predicate(getAttrs storage.AttrFunc) storage.SelectionPredicate {
	return storage.SelectionPredicate{
		Label: p.Label, Field: p.Field, GetAttrs: getAttrs,
		Limit: p.Limit, Continue: p.Continue, AllowWatchBookmarks: p.AllowWatchBookmarks, Shard: p.Shard,
	}
}

// ParseBool parses the boolean query parameter name of q: true/false/1/0
// and their strconv spellings; absent is false; anything else is 400.
func ParseBool(q url.Values, name string) (bool, error) {
	s := q.Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: must be true or false", s, name))
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
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid value %q for %s: must be a non-negative integer", s, name))
	}
	return v, nil
}
