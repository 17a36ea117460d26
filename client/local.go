package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
)

// LocalConfig configures NewLocal.
type LocalConfig struct {
	// Kinds resolves objects to kinds. Required.
	Kinds *Kinds
	// Store returns the write path (a registry.Store over the kind's
	// storage: an etcd3 store or a cacher) of a kind; reads go to its
	// Storage(). Required. A manager provides it for the kinds it serves.
	Store func(Kind) (*registry.Store, error)
}

// NewLocal returns a Client over the library's storage, in process: the
// registry's write rules (uid, generation, finalizers, conflicts) apply as
// they do behind the HTTP server.
func NewLocal(cfg LocalConfig) (Client, error) {
	if cfg.Kinds == nil || cfg.Store == nil {
		return nil, errors.New("client: LocalConfig needs Kinds and Store")
	}
	return &local{cfg: cfg}, nil
}

type local struct{ cfg LocalConfig }

func (c *local) Kinds() *Kinds { return c.cfg.Kinds }

func (c *local) Status() StatusWriter { return localStatus{c} }

// resolve returns obj's kind and registry.Store.
func (c *local) resolve(obj runtime.Object) (Kind, *registry.Store, error) {
	kind, err := c.cfg.Kinds.KindFor(obj)
	if err != nil {
		return Kind{}, nil, err
	}
	s, err := c.cfg.Store(kind)
	if err != nil {
		return Kind{}, nil, err
	}
	return kind, s, nil
}

// keyOf returns the storage key of obj, which must be named.
func keyOf(kind Kind, obj Object) (string, error) {
	if obj.GetName() == "" {
		return "", storage.NewInvalidObjError("", fmt.Sprintf("%s: metadata.name is required", kind.GroupVersionKind.Kind))
	}
	if kind.Namespaced && obj.GetNamespace() == "" {
		return "", storage.NewInvalidObjError("", fmt.Sprintf("%s %q: metadata.namespace is required", kind.GroupVersionKind.Kind, obj.GetName()))
	}
	if err := kind.CheckNamespace(obj.GetNamespace()); err != nil {
		return "", err
	}
	return kind.StorageKey(obj.GetNamespace(), obj.GetName()), nil
}

func (c *local) Get(ctx context.Context, key ObjectKey, obj Object, _ ...GetOption) error {
	kind, s, err := c.resolve(obj)
	if err != nil {
		return err
	}
	if err := kind.CheckNamespace(key.Namespace); err != nil {
		return err
	}
	return s.Storage().Get(ctx, kind.StorageKey(key.Namespace, key.Name), storage.GetOptions{}, obj)
}

func (c *local) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	kind, s, err := c.resolve(list)
	if err != nil {
		return err
	}
	o := collect(opts, ListOption.ApplyToList)
	if err := kind.CheckNamespace(o.Namespace); err != nil {
		return err
	}
	sopts, err := storage.ListOptionsFrom(o.asMeta(), kind.GetAttrs, nil)
	if err != nil {
		return err
	}
	fresh, err := newOf(list) // the storage appends to the items it is given
	if err != nil {
		return err
	}
	if u, ok := list.(runtime.Unstructured); ok {
		fresh.(runtime.Unstructured).SetUnstructuredContent(map[string]any{
			"apiVersion": u.UnstructuredContent()["apiVersion"], "kind": u.UnstructuredContent()["kind"]})
	}
	if err := s.Storage().GetList(ctx, kind.ListKey(o.Namespace), sopts, fresh); err != nil {
		return err
	}
	return copyInto(list, fresh)
}

// maxGenerateNameAttempts bounds the names Create tries for generateName.
const maxGenerateNameAttempts = 8

func (c *local) Create(ctx context.Context, obj Object, opts ...CreateOption) error {
	kind, s, err := c.resolve(obj)
	if err != nil {
		return err
	}
	o := collect(opts, CreateOption.ApplyToCreate)
	generate := obj.GetName() == "" && obj.GetGenerateName() != ""
	for attempt := 1; ; attempt++ {
		if generate {
			obj.SetName(obj.GetGenerateName() + utilrand.String(5))
		}
		key, err := keyOf(kind, obj)
		if err != nil {
			return err
		}
		err = s.Create(ctx, key, obj, obj, registry.CreateOptions{DryRun: o.DryRun})
		if err == nil || !generate || !IsAlreadyExists(err) || attempt == maxGenerateNameAttempts {
			if err != nil && generate {
				obj.SetName("")
			}
			return err
		}
	}
}

func (c *local) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return c.update(ctx, obj, collect(opts, UpdateOption.ApplyToUpdate).DryRun, func(cur runtime.Object) (runtime.Object, error) {
		return withStatusOf(obj.DeepCopyObject(), cur)
	})
}

func (c *local) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	return c.update(ctx, obj, collect(opts, PatchOption.ApplyToPatch).DryRun, func(cur runtime.Object) (runtime.Object, error) {
		next, err := patched(cur, patch.Type(), data)
		if err != nil {
			return nil, err
		}
		return withStatusOf(next, cur)
	})
}

// update runs a registry update of obj's object with mutate and decodes
// the result into obj.
func (c *local) update(ctx context.Context, obj Object, dryRun bool, mutate registry.MutateFunc) error {
	kind, s, err := c.resolve(obj)
	if err != nil {
		return err
	}
	key, err := keyOf(kind, obj)
	if err != nil {
		return err
	}
	out := obj.DeepCopyObject()
	if _, err := s.Update(ctx, key, out, registry.UpdateOptions{DryRun: dryRun}, mutate); err != nil {
		return err
	}
	return copyInto(obj, out)
}

func (c *local) Delete(ctx context.Context, obj Object, opts ...DeleteOption) error {
	kind, s, err := c.resolve(obj)
	if err != nil {
		return err
	}
	key, err := keyOf(kind, obj)
	if err != nil {
		return err
	}
	o := collect(opts, DeleteOption.ApplyToDelete)
	var policy metav1.DeletionPropagation
	if o.PropagationPolicy != nil {
		policy = *o.PropagationPolicy
	}
	last := obj.DeepCopyObject()
	_, err = s.Delete(ctx, key, last, registry.DeleteOptions{
		Preconditions: storagePreconditions(o), DryRun: o.DryRun, PropagationPolicy: policy,
	})
	return err
}

func (c *local) DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error {
	kind, s, err := c.resolve(obj)
	if err != nil {
		return err
	}
	o := collect(opts, DeleteAllOfOption.ApplyToDeleteAllOf)
	if err := kind.CheckNamespace(o.Namespace); err != nil {
		return err
	}
	sopts, err := storage.ListOptionsFrom(o.ListOptions.asMeta(), kind.GetAttrs, nil)
	if err != nil {
		return err
	}
	list := kind.NewList()
	if err := s.Storage().GetList(ctx, kind.ListKey(o.Namespace), sopts, list); err != nil {
		return err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return fmt.Errorf("client: DeleteAllOf: %w", err)
	}
	var errs []error
	for _, item := range items {
		it, ok := item.(Object)
		if !ok {
			continue
		}
		if err := c.Delete(ctx, it, &o.DeleteOptions); err != nil && !IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ApplyToDelete lets DeleteOptions be passed as a DeleteOption.
func (o *DeleteOptions) ApplyToDelete(to *DeleteOptions) { *to = *o }

// storagePreconditions returns o's preconditions for storage.
func storagePreconditions(o DeleteOptions) *storage.Preconditions {
	if o.Preconditions == nil || (o.Preconditions.UID == nil && o.Preconditions.ResourceVersion == nil) {
		return nil
	}
	return &storage.Preconditions{UID: o.Preconditions.UID, ResourceVersion: o.Preconditions.ResourceVersion}
}

// localStatus is the status writer of a local client.
type localStatus struct{ c *local }

func (w localStatus) Update(ctx context.Context, obj Object, opts ...UpdateOption) error {
	return w.c.update(ctx, obj, collect(opts, UpdateOption.ApplyToUpdate).DryRun, func(cur runtime.Object) (runtime.Object, error) {
		next, err := withStatusOf(cur, obj)
		if err != nil {
			return nil, err
		}
		// obj's resourceVersion, checked by the registry as for Update
		// (a Conflict naming the object when obj is stale).
		a, err := meta.Accessor(next)
		if err != nil {
			return nil, err
		}
		a.SetResourceVersion(obj.GetResourceVersion())
		return next, nil
	})
}

func (w localStatus) Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error {
	data, err := patch.Data(obj)
	if err != nil {
		return err
	}
	return w.c.update(ctx, obj, collect(opts, PatchOption.ApplyToPatch).DryRun, func(cur runtime.Object) (runtime.Object, error) {
		next, err := patched(cur, patch.Type(), data)
		if err != nil {
			return nil, err
		}
		return withStatusOf(cur, next)
	})
}

// patched returns cur with the patch applied, as a new object of cur's
// type.
func patched(cur runtime.Object, t types.PatchType, patch []byte) (runtime.Object, error) {
	doc, err := json.Marshal(cur)
	if err != nil {
		return nil, fmt.Errorf("client: encoding the object to patch: %w", err)
	}
	doc, err = applyPatch(t, doc, patch)
	if err != nil {
		return nil, err
	}
	next := reflect.New(reflect.TypeOf(cur).Elem()).Interface().(runtime.Object)
	if err := json.Unmarshal(doc, next); err != nil {
		return nil, storage.NewInvalidObjError("", "the patched object does not decode: "+err.Error())
	}
	return next, nil
}

// withStatusOf returns obj with the status of from (a top-level "status"
// field; kept absent when from has none).
func withStatusOf(obj, from runtime.Object) (runtime.Object, error) {
	om, err := toMap(obj)
	if err != nil {
		return nil, err
	}
	fm, err := toMap(from)
	if err != nil {
		return nil, err
	}
	if st, ok := fm["status"]; ok {
		om["status"] = st
	} else {
		delete(om, "status")
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(runtime.Object)
	if u, ok := out.(runtime.Unstructured); ok {
		u.SetUnstructuredContent(om)
		return out, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(om, out); err != nil {
		return nil, fmt.Errorf("client: %T: %w", obj, err)
	}
	return out, nil
}

// toMap returns a copy of obj as unstructured content.
func toMap(obj runtime.Object) (map[string]any, error) {
	if u, ok := obj.(runtime.Unstructured); ok {
		return runtime.DeepCopyJSON(u.UnstructuredContent()), nil
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("client: %T: %w", obj, err)
	}
	return m, nil
}

// copyInto sets *out to *src (same pointer types; src is given away).
func copyInto(out, src runtime.Object) error {
	if !storage.SetObject(out, src) {
		return fmt.Errorf("client: cannot copy %T into %T", src, out)
	}
	return nil
}

// newOf returns a new zero object of obj's pointer type.
func newOf(obj runtime.Object) (runtime.Object, error) {
	out, ok := storage.NewLike(obj)
	if !ok {
		return nil, fmt.Errorf("client: %T is not a pointer to an object", obj)
	}
	return out, nil
}
