package cache

import (
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/storage"
)

// synced returns the synced informer of obj's kind: ErrNotStarted before
// Start, ErrStopped after Shutdown, ctx's error if it ends before the
// informer syncs.
func (c *Cache) synced(ctx context.Context, obj runtime.Object) (client.Kind, *Informer, error) {
	kind, err := c.opts.Kinds.KindFor(obj)
	if err != nil {
		return client.Kind{}, nil, err
	}
	c.mu.Lock()
	started, stopped := c.ctx != nil, c.stopped
	c.mu.Unlock()
	switch {
	case stopped:
		return client.Kind{}, nil, fmt.Errorf("%w: reading %s", ErrStopped, kind.GroupVersionKind.Kind)
	case !started:
		return client.Kind{}, nil, fmt.Errorf("%w: reading %s", ErrNotStarted, kind.GroupVersionKind.Kind)
	}
	inf, err := c.InformerForKind(kind) // made (and started) on the first read, as the builder would
	if err != nil {
		return client.Kind{}, nil, err
	}
	if !reflector.WaitForCacheSync(ctx, inf.HasSynced) {
		return client.Kind{}, nil, fmt.Errorf("cache: %s not synced: %w", kind.GroupVersionKind.Kind, context.Cause(ctx))
	}
	return kind, inf, nil
}

// Get implements client.Reader: a copy of the cached object into obj, or
// a not-found *storage.Error. With client.UnsafeDisableDeepCopy (and obj
// of the cached object's type) the copy is shallow: obj shares the
// cache's maps, slices and pointers and must not be modified.
func (c *Cache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	kind, inf, err := c.synced(ctx, obj)
	if err != nil {
		return err
	}
	if err := kind.CheckNamespace(key.Namespace); err != nil {
		return err
	}
	storeKey := key.Name
	if key.Namespace != "" {
		storeKey = key.Namespace + "/" + key.Name
	}
	cached, ok := inf.GetStore().GetByKey(storeKey)
	if !ok {
		return storage.NewNotFoundError(kind.StorageKey(key.Namespace, key.Name), 0)
	}
	var o client.GetOptions
	for _, f := range opts {
		f.ApplyToGet(&o)
	}
	if ov, cv := reflect.ValueOf(obj), reflect.ValueOf(cached); o.UnsafeDisableDeepCopy && ov.Type() == cv.Type() {
		ov.Elem().Set(cv.Elem())
		return nil
	}
	return copyObject(obj, cached)
}

// List implements client.Reader: copies of the cached objects matching the
// namespace and selectors, with the informer's last resourceVersion. With
// client.UnsafeDisableDeepCopy (and items of the cached objects' type)
// the items are the cache's own objects, not copies, and must not be
// modified. An
// exact field requirement on a field of IndexField is served from its
// index; the other fields are those of the kind's GetAttrs.
// Limit and Continue are not served from a cache (client.WithCache sends
// those lists to storage).
func (c *Cache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	kind, inf, err := c.synced(ctx, list)
	if err != nil {
		return err
	}
	var o client.ListOptions
	for _, f := range opts {
		f.ApplyToList(&o)
	}
	if err := kind.CheckNamespace(o.Namespace); err != nil {
		return err
	}
	objs, fieldSel, indexed, err := fromFieldIndex(inf, o.Namespace, o.FieldSelector)
	switch {
	case err != nil:
		return err
	case indexed: // already in o.Namespace
	case o.Namespace != "":
		if objs, err = inf.GetIndexer().ByIndex(reflector.NamespaceIndex, o.Namespace); err != nil {
			return err
		}
	default:
		objs = inf.GetStore().List()
	}
	// The cache's own objects, when the caller accepts them and they fit.
	shared := o.UnsafeDisableDeepCopy && len(objs) > 0 && reflect.TypeOf(objs[0]) == reflect.TypeOf(newOf(list, kind))
	items := make([]runtime.Object, 0, len(objs))
	for _, obj := range objs {
		ok, err := matches(kind, obj, o.LabelSelector, fieldSel)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if shared {
			items = append(items, obj)
			continue
		}
		item := client.Object(newOf(list, kind))
		if err := copyObject(item, obj); err != nil {
			return err
		}
		items = append(items, item)
	}
	if err := meta.SetList(list, items); err != nil {
		return fmt.Errorf("cache: %T: %w", list, err)
	}
	if lm, err := meta.ListAccessor(list); err == nil {
		lm.SetResourceVersion(inf.LastSyncResourceVersion())
		lm.SetContinue("")
	}
	return nil
}

// newOf returns an empty item for list: unstructured for an unstructured
// list, kind.New() otherwise.
func newOf(list runtime.Object, kind client.Kind) client.Object {
	if _, ok := list.(runtime.Unstructured); ok {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kind.GroupVersionKind)
		return u
	}
	return kind.New()
}

// matches reports whether obj passes the selectors.
func matches(kind client.Kind, obj client.Object, ls labels.Selector, fs fields.Selector) (bool, error) {
	if (ls == nil || ls.Empty()) && (fs == nil || fs.Empty()) {
		return true, nil
	}
	lset, fset, err := kind.GetAttrs(obj)
	if err != nil {
		return false, err
	}
	if ls != nil && !ls.Matches(lset) {
		return false, nil
	}
	return fs == nil || fs.Matches(fset), nil
}

// copyObject sets out to a deep copy of src, converting between typed and
// unstructured objects when their types differ.
func copyObject(out client.Object, src client.Object) error {
	ov, sv := reflect.ValueOf(out), reflect.ValueOf(src)
	if ov.Type() == sv.Type() {
		ov.Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
		return nil
	}
	var m map[string]any
	if u, ok := src.(runtime.Unstructured); ok {
		m = runtime.DeepCopyJSON(u.UnstructuredContent())
	} else {
		var err error
		if m, err = runtime.DefaultUnstructuredConverter.ToUnstructured(src); err != nil {
			return fmt.Errorf("cache: %T into %T: %w", src, out, err)
		}
	}
	if u, ok := out.(runtime.Unstructured); ok {
		u.SetUnstructuredContent(m)
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return fmt.Errorf("cache: %T into %T: %w", src, out, err)
	}
	return nil
}
