package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// GetOptions are the options of Get.
type GetOptions struct {
	// FromStorage reads from storage (a linearizable read) even when a
	// cache watches the kind.
	FromStorage bool
	// UnsafeDisableDeepCopy, on a read served from a cache, sets the
	// object to a shallow copy of the cache's own (see
	// UnsafeDisableDeepCopy).
	UnsafeDisableDeepCopy bool
}

// GetOption changes GetOptions.
type GetOption interface{ ApplyToGet(*GetOptions) }

// ListOptions are the options of List (and the selection of DeleteAllOf).
type ListOptions struct {
	// Namespace restricts the list to one namespace; "" lists all.
	Namespace string
	// LabelSelector and FieldSelector filter the objects; nil means
	// everything.
	LabelSelector labels.Selector
	FieldSelector fields.Selector
	// Limit, when positive, returns at most that many objects and a
	// continue token in the list's metadata when there are more (served
	// from storage, not from a cache).
	Limit int64
	// Continue is the token of the previous page.
	Continue string
	// FromStorage lists from storage even when a cache watches the kind.
	FromStorage bool
	// UnsafeDisableDeepCopy, on a list served from a cache, returns the
	// cache's own objects instead of copies (see UnsafeDisableDeepCopy).
	UnsafeDisableDeepCopy bool
}

// ListOption changes ListOptions.
type ListOption interface{ ApplyToList(*ListOptions) }

// ApplyToList sets o as the options; a ListOptions is itself a ListOption.
func (o *ListOptions) ApplyToList(to *ListOptions) { *to = *o }

// ApplyToDeleteAllOf sets o as the selection of DeleteAllOf.
func (o *ListOptions) ApplyToDeleteAllOf(to *DeleteAllOfOptions) { to.ListOptions = *o }

// asMeta returns the options as metav1.ListOptions (for HTTP and storage).
func (o *ListOptions) asMeta() metav1.ListOptions {
	out := metav1.ListOptions{Limit: o.Limit, Continue: o.Continue}
	if o.LabelSelector != nil {
		out.LabelSelector = o.LabelSelector.String()
	}
	if o.FieldSelector != nil {
		out.FieldSelector = o.FieldSelector.String()
	}
	return out
}

// CreateOptions are the options of Create.
type CreateOptions struct {
	// DryRun checks and prepares the object without storing it.
	DryRun bool
}

// CreateOption changes CreateOptions.
type CreateOption interface{ ApplyToCreate(*CreateOptions) }

// UpdateOptions are the options of Update.
type UpdateOptions struct {
	// DryRun checks and prepares the update without storing it.
	DryRun bool
}

// UpdateOption changes UpdateOptions.
type UpdateOption interface{ ApplyToUpdate(*UpdateOptions) }

// PatchOptions are the options of Patch.
type PatchOptions struct {
	// DryRun checks and prepares the patch without storing it.
	DryRun bool
}

// PatchOption changes PatchOptions.
type PatchOption interface{ ApplyToPatch(*PatchOptions) }

// DeleteOptions are the options of Delete.
type DeleteOptions struct {
	// Preconditions (uid, resourceVersion) must hold on the stored object.
	Preconditions *metav1.Preconditions
	// PropagationPolicy says what happens to the dependents (objects with
	// an ownerReference to the deleted one), over HTTP and in process
	// alike: the registry records it as the garbage collector's finalizer
	// on the object (Foreground: foregroundDeletion, Orphan: orphan,
	// Background: neither), and a garbage collector (package gc,
	// manager.Options.GarbageCollector) finishes the delete. Nil keeps the
	// finalizer the object has, else Background.
	PropagationPolicy *metav1.DeletionPropagation
	// DryRun checks the delete without doing it.
	DryRun bool
}

// DeleteOption changes DeleteOptions.
type DeleteOption interface{ ApplyToDelete(*DeleteOptions) }

// DeleteAllOfOptions are the options of DeleteAllOf: which objects, and
// how each is deleted.
type DeleteAllOfOptions struct {
	ListOptions
	DeleteOptions
}

// DeleteAllOfOption changes DeleteAllOfOptions.
type DeleteAllOfOption interface{ ApplyToDeleteAllOf(*DeleteAllOfOptions) }

// InNamespace restricts List and DeleteAllOf to a namespace.
type InNamespace string

// ApplyToList implements ListOption.
func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (n InNamespace) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { o.Namespace = string(n) }

// MatchingLabels selects objects that have all these labels.
type MatchingLabels map[string]string

// ApplyToList implements ListOption.
func (m MatchingLabels) ApplyToList(o *ListOptions) {
	o.LabelSelector = labels.SelectorFromValidatedSet(labels.Set(m))
}

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingLabels) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// MatchingLabelsSelector selects objects with a label selector.
type MatchingLabelsSelector struct{ labels.Selector }

// ApplyToList implements ListOption.
func (m MatchingLabelsSelector) ApplyToList(o *ListOptions) { o.LabelSelector = m.Selector }

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingLabelsSelector) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	m.ApplyToList(&o.ListOptions)
}

// MatchingFields selects objects whose fields (metadata.name,
// metadata.namespace, or the kind's selectable fields) have these values.
type MatchingFields fields.Set

// ApplyToList implements ListOption.
func (m MatchingFields) ApplyToList(o *ListOptions) {
	o.FieldSelector = fields.SelectorFromSet(fields.Set(m))
}

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (m MatchingFields) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// Limit pages a List: at most this many objects per call.
type Limit int64

// ApplyToList implements ListOption.
func (l Limit) ApplyToList(o *ListOptions) { o.Limit = int64(l) }

// Continue continues a paged List from the token of the previous page.
type Continue string

// ApplyToList implements ListOption.
func (c Continue) ApplyToList(o *ListOptions) { o.Continue = string(c) }

type fromStorage struct{}

// FromStorage makes a Get or List read storage even when a cache watches
// the kind.
var FromStorage fromStorage

// ApplyToGet implements GetOption.
func (fromStorage) ApplyToGet(o *GetOptions) { o.FromStorage = true }

// ApplyToList implements ListOption.
func (fromStorage) ApplyToList(o *ListOptions) { o.FromStorage = true }

type unsafeDisableDeepCopy struct{}

// UnsafeDisableDeepCopy makes a Get or List that a cache serves (package
// cache, WithCache) hand out the cache's own objects instead of deep
// copies: a List's items are the cached objects (or shallow copies of
// them, for a list of values such as []corev1.Pod), a Get's object a
// shallow copy of the cached one. Their maps, slices and pointers
// (labels, ownerReferences, spec, status) ARE THE CACHE'S, shared with
// every informer handler and reader of the kind.
//
// THE CALLER MUST NOT MODIFY ANYTHING IT READS THIS WAY, NOR KEEP IT TO
// MODIFY LATER: a change corrupts the cache (and its indexes) for
// everyone, silently, until the object next changes in storage. DeepCopy
// what must be changed (to Update it, say). Use it for hot read-only
// paths, where copying every object of a large List costs more than the
// work done with it. Reads from storage ignore it (they are fresh
// objects anyway).
var UnsafeDisableDeepCopy unsafeDisableDeepCopy

// ApplyToGet implements GetOption.
func (unsafeDisableDeepCopy) ApplyToGet(o *GetOptions) { o.UnsafeDisableDeepCopy = true }

// ApplyToList implements ListOption.
func (unsafeDisableDeepCopy) ApplyToList(o *ListOptions) { o.UnsafeDisableDeepCopy = true }

type dryRunAll struct{}

// DryRunAll makes a write check and prepare everything without storing.
var DryRunAll dryRunAll

// ApplyToCreate implements CreateOption.
func (dryRunAll) ApplyToCreate(o *CreateOptions) { o.DryRun = true }

// ApplyToUpdate implements UpdateOption.
func (dryRunAll) ApplyToUpdate(o *UpdateOptions) { o.DryRun = true }

// ApplyToPatch implements PatchOption.
func (dryRunAll) ApplyToPatch(o *PatchOptions) { o.DryRun = true }

// ApplyToDelete implements DeleteOption.
func (dryRunAll) ApplyToDelete(o *DeleteOptions) { o.DryRun = true }

// Preconditions must hold on the object Delete deletes.
type Preconditions metav1.Preconditions

// ApplyToDelete implements DeleteOption.
func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	mp := metav1.Preconditions(p)
	o.Preconditions = &mp
}

// PropagationPolicy says what happens to an object's dependents when it is
// deleted (see DeleteOptions.PropagationPolicy).
type PropagationPolicy metav1.DeletionPropagation

// ApplyToDelete implements DeleteOption.
func (p PropagationPolicy) ApplyToDelete(o *DeleteOptions) {
	mp := metav1.DeletionPropagation(p)
	o.PropagationPolicy = &mp
}

// ApplyToDeleteAllOf implements DeleteAllOfOption.
func (p PropagationPolicy) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	p.ApplyToDelete(&o.DeleteOptions)
}

// collect applies opts in order to zero options, each with apply (the
// option interface's method, such as GetOption.ApplyToGet).
func collect[F, O any](opts []F, apply func(F, *O)) O {
	var o O
	for _, f := range opts {
		apply(f, &o)
	}
	return o
}
