package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Attributes describe a request to an Authorizer.
type Attributes struct {
	// User is who asks.
	User *User
	// Verb is Kubernetes' verb: get, list, watch, create, update, patch,
	// delete or deletecollection for resources (and
	// unsafe-delete-ignore-read-errors, asked besides delete for the
	// unsafe delete of a corrupt object); the lower-case HTTP method (get,
	// post, ...) for other paths.
	Verb string
	// ResourceRequest is true for requests on a resource
	// (/apis/{group}/{version}/...), false for other paths (discovery,
	// /openapi, /version, /metrics).
	ResourceRequest bool
	// APIGroup, APIVersion, Resource, Namespace and Name name the object
	// or collection of a resource request ("" Namespace: cluster-scoped
	// or all namespaces; "" Name: the collection).
	APIGroup, APIVersion, Resource, Namespace, Name string
	// Path is the URL path of a request on another path.
	Path string
	// Subresource is "status" or "scale" for a request on an object's
	// subresource, "" otherwise.
	Subresource string
}

// Authorizer decides whether a request may be served.
type Authorizer interface {
	// Authorize reports whether a is allowed, and why not when it is not
	// (the reason is added to the 403 message). An error is a 500.
	Authorize(ctx context.Context, a Attributes) (allowed bool, reason string, err error)
}

// AuthorizerFunc adapts a function to Authorizer.
type AuthorizerFunc func(ctx context.Context, a Attributes) (bool, string, error)

// Authorize implements Authorizer.
func (f AuthorizerFunc) Authorize(ctx context.Context, a Attributes) (bool, string, error) {
	return f(ctx, a)
}

// readVerbs are the verbs that change nothing.
var readVerbs = []string{"get", "list", "watch"}

// ReadAllWriteGroups is an example policy: every authenticated user may
// read everything (resources, discovery, OpenAPI, metrics), and only
// members of groups may create, update, patch or delete.
func ReadAllWriteGroups(groups ...string) Authorizer {
	return AuthorizerFunc(func(_ context.Context, a Attributes) (bool, string, error) {
		if a.User == nil || !slices.Contains(a.User.Groups, AuthenticatedG) {
			return false, "", nil
		}
		if !a.ResourceRequest || slices.Contains(readVerbs, a.Verb) {
			return true, "", nil
		}
		for _, g := range groups {
			if slices.Contains(a.User.Groups, g) {
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("only members of %s may write", strings.Join(groups, ", ")), nil
	})
}
