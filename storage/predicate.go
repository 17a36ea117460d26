package storage

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/sharding"
)

// AttrFunc returns the label and field sets a predicate matches against.
type AttrFunc func(obj runtime.Object) (labels.Set, fields.Set, error)

// DefaultAttrs returns an object's labels and the fields metadata.name and
// metadata.namespace.
func DefaultAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	f := fields.Set{"metadata.name": acc.GetName()}
	if ns := acc.GetNamespace(); ns != "" {
		f["metadata.namespace"] = ns
	} else {
		f["metadata.namespace"] = ""
	}
	return labels.Set(acc.GetLabels()), f, nil
}

// SelectionPredicate selects objects by label and field selectors and carries
// the paging and bookmark options of a list or watch.
type SelectionPredicate struct {
	// Label selects by labels; nil means everything.
	Label labels.Selector
	// Field selects by fields; nil means everything.
	Field fields.Selector
	// GetAttrs extracts the label and field sets; nil means DefaultAttrs.
	GetAttrs AttrFunc
	// IndexLabels names labels a cacher may use to index watchers.
	IndexLabels []string
	// IndexFields names fields a cacher may use to index watchers.
	IndexFields []string
	// Limit caps the number of items in a list page; 0 means no limit.
	Limit int64
	// Continue is the opaque token of the previous page.
	Continue string
	// AllowWatchBookmarks lets a watch send BOOKMARK events.
	AllowWatchBookmarks bool
	// Shard selects one shard of the objects (see ParseShardSelector); nil
	// or empty selects all.
	Shard sharding.Selector
}

// Everything selects every object.
var Everything = SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}

func (s *SelectionPredicate) labelSel() labels.Selector {
	if s.Label == nil {
		return labels.Everything()
	}
	return s.Label
}

func (s *SelectionPredicate) fieldSel() fields.Selector {
	if s.Field == nil {
		return fields.Everything()
	}
	return s.Field
}

// Empty reports whether the predicate selects everything.
func (s *SelectionPredicate) Empty() bool {
	return s.labelSel().Empty() && s.fieldSel().Empty() && !s.Sharded()
}

// Sharded reports whether the predicate selects one shard.
func (s *SelectionPredicate) Sharded() bool { return s.Shard != nil && !s.Shard.Empty() }

// MatchesShard reports whether obj is in the predicate's shard (always
// true without one).
func (s *SelectionPredicate) MatchesShard(obj runtime.Object) bool {
	return !s.Sharded() || shardMatches(s.Shard, obj)
}

// Matches reports whether obj satisfies the selectors and is in the shard.
func (s *SelectionPredicate) Matches(obj runtime.Object) (bool, error) {
	if s.Empty() {
		return true, nil
	}
	if !s.MatchesShard(obj) {
		return false, nil
	}
	l, f, err := s.Attrs(obj)
	if err != nil {
		return false, err
	}
	return s.MatchesObjectAttributes(l, f), nil
}

// Attrs returns obj's label and field sets with GetAttrs (or DefaultAttrs).
func (s *SelectionPredicate) Attrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	get := s.GetAttrs
	if get == nil {
		get = DefaultAttrs
	}
	l, f, err := get(obj)
	if err != nil {
		return nil, nil, fmt.Errorf("reading attributes for selection: %w", err)
	}
	return l, f, nil
}

// MatchesObjectAttributes reports whether the given sets satisfy the selectors.
func (s *SelectionPredicate) MatchesObjectAttributes(l labels.Set, f fields.Set) bool {
	return s.labelSel().Matches(l) && s.fieldSel().Matches(f)
}

// MatchesSingle returns the name the predicate requires (metadata.name=X),
// if it requires exactly one.
func (s *SelectionPredicate) MatchesSingle() (string, bool) {
	if s.Field == nil {
		return "", false
	}
	return s.Field.RequiresExactMatch("metadata.name")
}

// MatchesSingleNamespace returns the namespace the predicate requires
// (metadata.namespace=X), if it requires exactly one.
func (s *SelectionPredicate) MatchesSingleNamespace() (string, bool) {
	if s.Field == nil {
		return "", false
	}
	return s.Field.RequiresExactMatch("metadata.namespace")
}

// String describes the predicate for logs and errors.
func (s *SelectionPredicate) String() string {
	if s.Sharded() {
		return fmt.Sprintf("labels=%q fields=%q shard=%q", s.labelSel().String(), s.fieldSel().String(), s.Shard.String())
	}
	return fmt.Sprintf("labels=%q fields=%q", s.labelSel().String(), s.fieldSel().String())
}
