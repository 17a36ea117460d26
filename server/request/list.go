package request

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/storage"
)

// ListParams are the parsed query parameters of a list or watch.
type ListParams struct {
	// Watch is watch=true (or 1).
	Watch bool
	// Timeout is timeoutSeconds (0: none given).
	Timeout time.Duration
	// Options are the storage options the request asks for, made by
	// storage.ListOptionsFrom (the one translation of list options).
	Options storage.ListOptions
	// ShardExpr is the canonical form of the shardSelector ("" for none).
	ShardExpr string
}

// ParseList parses q, the query of a list or watch of a resource whose
// selectable field labels are selectable and whose objects' labels and
// fields getAttrs returns, into metav1.ListOptions, and translates them
// with storage.ListOptionsFrom. Malformed values are 400 BadRequest, as
// is a field selector on a field not selectable; valid values that do not
// go together are 422 Invalid (kind ListOptions), as Kubernetes answers.
func ParseList(q url.Values, selectable map[string]bool, getAttrs storage.AttrFunc) (*ListParams, error) {
	o := metav1.ListOptions{
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: metav1.ResourceVersionMatch(q.Get("resourceVersionMatch")),
		Continue:             q.Get("continue"),
		LabelSelector:        q.Get("labelSelector"),
		FieldSelector:        q.Get("fieldSelector"),
	}
	var err error
	if o.Watch, err = ParseBool(q, "watch"); err != nil {
		return nil, err
	}
	if o.AllowWatchBookmarks, err = ParseBool(q, "allowWatchBookmarks"); err != nil {
		return nil, err
	}
	if q.Has("sendInitialEvents") {
		v, err := ParseBool(q, "sendInitialEvents")
		if err != nil {
			return nil, err
		}
		o.SendInitialEvents = &v
	}
	if o.Limit, err = parseNonNegative(q, "limit"); err != nil {
		return nil, err
	}
	secs, err := parseNonNegative(q, "timeoutSeconds")
	if err != nil {
		return nil, err
	}
	if q.Has("shardSelector") {
		o.ShardSelector = q.Get("shardSelector")
		if o.ShardSelector == "" {
			// ListOptionsFrom reads "" as none; a given but empty
			// selector is refused, as ParseShardSelector refuses it.
			if _, err := storage.ParseShardSelector(""); err != nil {
				return nil, apierrors.NewBadRequest(err.Error())
			}
		}
	}
	opts, err := storage.ListOptionsFrom(o, getAttrs, func(f string) bool { return selectable[f] })
	if err != nil {
		return nil, err
	}
	p := &ListParams{Watch: o.Watch, Timeout: time.Duration(secs) * time.Second, Options: opts}
	if opts.Predicate.Shard != nil {
		p.ShardExpr = opts.Predicate.Shard.String()
	}
	return p, nil
}

// IsWatch reports whether req asks for a watch stream (watch=true, or
// another true spelling of strconv.ParseBool).
func IsWatch(req *http.Request) bool {
	b, err := strconv.ParseBool(req.URL.Query().Get("watch"))
	return err == nil && b
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
