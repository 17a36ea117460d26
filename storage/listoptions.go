package storage

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ListOptionsFrom is the one translation of a client's list or watch
// options (o.Watch says which) into the options of a recursive GetList or
// Watch, carrying Kubernetes' ListOptions validation. getAttrs extracts an
// object's labels and fields for the selectors (nil: DefaultAttrs);
// selectable, when not nil, says which field labels a field selector may
// use.
//
// A malformed selector, or a field label selectable refuses, is 400
// BadRequest; valid values that do not go together (resourceVersionMatch
// without resourceVersion, sendInitialEvents on a list, ...) are 422
// Invalid of kind ListOptions, as Kubernetes answers. A watch's limit and
// continue token are dropped; sendInitialEvents applies only to a watch.
// The resource version is parsed here, once (ParseRV; malformed: 400).
// ProgressNotify is left to the caller. Errors are *Error: 400 is
// CodeInvalidArgument, 422 is CodeInvalidObj (whose Status carries the
// field causes and the kind ListOptions).
func ListOptionsFrom(o metav1.ListOptions, getAttrs AttrFunc, selectable func(field string) bool) (ListOptions, error) {
	lsel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return ListOptions{}, NewInvalidArgumentError(fmt.Sprintf("unable to parse labelSelector: %v", err), nil)
	}
	fsel, err := fields.ParseSelector(o.FieldSelector)
	if err != nil {
		return ListOptions{}, NewInvalidArgumentError(fmt.Sprintf("unable to parse fieldSelector: %v", err), nil)
	}
	if selectable != nil {
		for _, req := range fsel.Requirements() {
			if !selectable(req.Field) {
				return ListOptions{}, NewInvalidArgumentError(fmt.Sprintf("field label not supported: %s", req.Field), nil)
			}
		}
	}
	pred := SelectionPredicate{Label: lsel, Field: fsel, GetAttrs: getAttrs,
		Limit: o.Limit, Continue: o.Continue, AllowWatchBookmarks: o.AllowWatchBookmarks}
	if o.ShardSelector != "" {
		if pred.Shard, err = ParseShardSelector(o.ShardSelector); err != nil {
			return ListOptions{}, NewInvalidArgumentError(err.Error(), nil)
		}
	}
	if errs := validateListOptions(o); len(errs) > 0 {
		return ListOptions{}, newInvalidOptionsError(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, errs)
	}
	rv, err := ParseRV(o.ResourceVersion)
	if err != nil {
		return ListOptions{}, err
	}
	opts := ListOptions{ResourceVersion: rv, ResourceVersionMatch: o.ResourceVersionMatch,
		Predicate: pred, Recursive: true}
	if o.Watch {
		opts.Predicate.Limit, opts.Predicate.Continue = 0, ""
		opts.SendInitialEvents = o.SendInitialEvents
	}
	return opts, nil
}

// validateListOptions applies Kubernetes' ListOptions rules.
func validateListOptions(o metav1.ListOptions) field.ErrorList {
	var errs field.ErrorList
	rvm := field.NewPath("resourceVersionMatch")
	switch o.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact:
	default:
		errs = append(errs, field.NotSupported(rvm, o.ResourceVersionMatch, []string{
			string(metav1.ResourceVersionMatchExact), string(metav1.ResourceVersionMatchNotOlderThan), ""}))
	}
	if o.Watch {
		if o.SendInitialEvents != nil {
			if !o.AllowWatchBookmarks {
				errs = append(errs, field.Forbidden(field.NewPath("allowWatchBookmarks"),
					"sendInitialEvents requires setting allowWatchBookmarks=true"))
			}
			if o.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
				errs = append(errs, field.Forbidden(rvm,
					"sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"))
			}
		} else if o.ResourceVersionMatch != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"))
		}
		return errs
	}
	if o.SendInitialEvents != nil {
		errs = append(errs, field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for list"))
	}
	if o.ResourceVersionMatch != "" {
		if o.ResourceVersion == "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if o.Continue != "" {
			errs = append(errs, field.Forbidden(rvm, "resourceVersionMatch is forbidden when continue is provided"))
		}
		if o.ResourceVersionMatch == metav1.ResourceVersionMatchExact && o.ResourceVersion == "0" {
			errs = append(errs, field.Forbidden(rvm, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if o.Continue != "" && o.ResourceVersion != "" && o.ResourceVersion != "0" {
		errs = append(errs, field.Forbidden(field.NewPath("resourceVersion"),
			"specifying resource version is not allowed when using continue"))
	}
	return errs
}

// newInvalidOptionsError is the CodeInvalidObj error of request options of
// kind gk that break errs; its Status is Kubernetes' 422 Invalid of that
// kind, with one cause per field.
func newInvalidOptionsError(gk schema.GroupKind, errs field.ErrorList) *Error {
	st := apierrors.NewInvalid(gk, "", errs).ErrStatus
	return &Error{Code: CodeInvalidObj, Msg: st.Message, status: &st}
}
