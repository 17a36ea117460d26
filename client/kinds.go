package client

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	"github.com/listwatch/listwatch/storage"
)

// ErrUnknownKind is returned (wrapped) for an object whose kind the Kinds
// do not know.
var ErrUnknownKind = errors.New("client: unknown kind")

// ErrNamespaceOfClusterScoped is the cause (errors.Is) of the 400 Bad
// Request error (IsBadRequest) returned for a namespace given with a
// cluster-scoped kind: in a Get's key, an InNamespace of List or
// DeleteAllOf, or an object's metadata.namespace.
var ErrNamespaceOfClusterScoped = errors.New("client: a cluster-scoped kind has no namespace")

// Kind describes one kind of object: what the client, the caches and the
// manager need to store, serve and name it.
type Kind struct {
	// GroupVersionKind is the kind's apiVersion and kind. Required.
	GroupVersionKind schema.GroupVersionKind
	// Resource is the plural resource name, as in
	// /apis/{group}/{version}/{resource}. Empty means the lower-case kind
	// plus "s" (meta.UnsafeGuessKindToResource).
	Resource string
	// Namespaced says whether objects live in namespaces.
	Namespaced bool
	// New returns an empty object of the kind (*widget.Widget{}). Nil
	// means *unstructured.Unstructured.
	New func() Object
	// NewList returns an empty list of the kind. Nil means
	// *unstructured.UnstructuredList.
	NewList func() ObjectList
	// KeyRoot is the storage key prefix of the kind's objects ("/widgets");
	// an object's key is KeyRoot/<namespace>/<name> (KeyRoot/<name> when
	// cluster-scoped). Empty means "/" + Resource.
	KeyRoot string
	// GetAttrs returns the labels and selectable fields of an object; nil
	// means storage.DefaultAttrs (metadata.name, metadata.namespace).
	GetAttrs storage.AttrFunc
	// Codec encodes objects for storage. Nil means JSON (the scheme's
	// JSON codec for kinds from NewKinds, unstructured JSON otherwise).
	Codec runtime.Codec
}

// GroupVersionResource returns the kind's resource.
func (k Kind) GroupVersionResource() schema.GroupVersionResource {
	return k.GroupVersionKind.GroupVersion().WithResource(k.Resource)
}

// StorageKey returns the storage key of the object namespace/name.
func (k Kind) StorageKey(namespace, name string) string {
	if k.Namespaced {
		return k.KeyRoot + "/" + namespace + "/" + name
	}
	return k.KeyRoot + "/" + name
}

// CheckNamespace returns nil when namespace may be used with the kind:
// any namespace ("" included) for a namespaced kind, only "" for a
// cluster-scoped one (an error wrapping ErrNamespaceOfClusterScoped, for
// which IsBadRequest holds, otherwise).
func (k Kind) CheckNamespace(namespace string) error {
	if k.Namespaced || namespace == "" {
		return nil
	}
	return storage.NewInvalidArgumentError(fmt.Sprintf("%s is cluster-scoped, namespace %q was given", k.GroupVersionKind.Kind, namespace),
		ErrNamespaceOfClusterScoped)
}

// ListKey returns the storage prefix of the objects in namespace (every
// object for "" or a cluster-scoped kind).
func (k Kind) ListKey(namespace string) string {
	if k.Namespaced && namespace != "" {
		return k.KeyRoot + "/" + namespace
	}
	return k.KeyRoot
}

// withDefaults fills in Resource, New, NewList, KeyRoot, GetAttrs and
// Codec.
func (k Kind) withDefaults() (Kind, error) {
	if k.GroupVersionKind.Kind == "" || k.GroupVersionKind.Version == "" {
		return k, fmt.Errorf("client: kind %v needs a version and a kind", k.GroupVersionKind)
	}
	if k.Resource == "" {
		plural, _ := meta.UnsafeGuessKindToResource(k.GroupVersionKind)
		k.Resource = plural.Resource
	}
	if k.New == nil {
		gvk := k.GroupVersionKind
		k.New = func() Object {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			return u
		}
	}
	if k.NewList == nil {
		gvk := k.GroupVersionKind
		k.NewList = func() ObjectList {
			u := &unstructured.UnstructuredList{}
			u.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			return u
		}
	}
	if k.KeyRoot == "" {
		k.KeyRoot = "/" + k.Resource
	}
	k.KeyRoot = "/" + strings.Trim(k.KeyRoot, "/")
	if k.GetAttrs == nil {
		k.GetAttrs = storage.DefaultAttrs
	}
	if k.Codec == nil {
		k.Codec = unstructured.UnstructuredJSONScheme
	}
	return k, nil
}

// Kinds is a registry of kinds, looked up by an object's Go type (or, for
// unstructured objects, its apiVersion and kind). It is safe for
// concurrent use.
type Kinds struct {
	mu     sync.RWMutex
	byGVK  map[schema.GroupVersionKind]Kind
	byType map[reflect.Type]schema.GroupVersionKind // object and list types
}

// NewKinds returns Kinds holding every kind of schemes that has metadata
// and a list type (KindList), as namespaced kinds with the default
// resource, key root and attributes and the scheme's JSON codec. Mark the
// cluster-scoped ones (Node, Namespace, ...) with SetClusterScoped; change
// anything else of a kind (another plural, selectable fields) with Get and
// Add.
func NewKinds(schemes ...*runtime.Scheme) (*Kinds, error) {
	k := &Kinds{byGVK: map[schema.GroupVersionKind]Kind{}, byType: map[reflect.Type]schema.GroupVersionKind{}}
	for _, s := range schemes {
		codecs := serializer.NewCodecFactory(s)
		info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
		if !ok {
			return nil, errors.New("client: the scheme has no JSON serializer")
		}
		types := s.AllKnownTypes()
		gvks := make([]schema.GroupVersionKind, 0, len(types))
		for gvk := range types {
			gvks = append(gvks, gvk)
		}
		slices.SortFunc(gvks, func(a, b schema.GroupVersionKind) int { return strings.Compare(a.String(), b.String()) })
		for _, gvk := range gvks {
			kind, ok := schemeKind(s, gvk, types)
			if !ok {
				continue
			}
			gv := gvk.GroupVersion()
			kind.Codec = codecs.CodecForVersions(info.Serializer, codecs.UniversalDeserializer(), gv, gv)
			if err := k.Add(kind); err != nil {
				return nil, err
			}
		}
	}
	return k, nil
}

// schemeKind returns the Kind of gvk in s when gvk is an object kind with
// metadata and a list kind.
func schemeKind(s *runtime.Scheme, gvk schema.GroupVersionKind, types map[schema.GroupVersionKind]reflect.Type) (Kind, bool) {
	if strings.HasSuffix(gvk.Kind, "List") || gvk.Version == runtime.APIVersionInternal {
		return Kind{}, false
	}
	listGVK := gvk.GroupVersion().WithKind(gvk.Kind + "List")
	if _, ok := types[listGVK]; !ok {
		return Kind{}, false
	}
	probe, err := s.New(gvk)
	if err != nil {
		return Kind{}, false
	}
	if _, ok := probe.(Object); !ok {
		return Kind{}, false
	}
	return Kind{
		GroupVersionKind: gvk,
		Namespaced:       true,
		New: func() Object {
			o, _ := s.New(gvk) // known to work
			return o.(Object)
		},
		NewList: func() ObjectList {
			o, _ := s.New(listGVK)
			return o
		},
	}, true
}

// SetClusterScoped marks the kinds of objs (objects or lists, as KindFor
// resolves them) cluster-scoped: their storage keys have no namespace
// segment, their URLs no /namespaces/{ns}, and a namespace given for them
// is an error (CheckNamespace). A kind Kinds does not know is
// ErrUnknownKind, and then no kind is changed.
//
//	kinds, err := client.NewKinds(scheme)
//	err = kinds.SetClusterScoped(&corev1.Node{}, &corev1.Namespace{})
func (k *Kinds) SetClusterScoped(objs ...runtime.Object) error {
	kinds := make([]Kind, 0, len(objs))
	for _, obj := range objs {
		kind, err := k.KindFor(obj)
		if err != nil {
			return err
		}
		kinds = append(kinds, kind)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, kind := range kinds {
		kind.Namespaced = false
		k.byGVK[kind.GroupVersionKind] = kind
	}
	return nil
}

// Add registers kind, replacing a kind of the same GroupVersionKind. To
// change a kind NewKinds registered (selectable fields, another plural),
// Get it, change the fields and Add it back:
//
//	w, _ := kinds.Get(widget.GroupVersion.WithKind(widget.Kind))
//	w.GetAttrs = widget.GetAttrs
//	err := kinds.Add(w)
func (k *Kinds) Add(kind Kind) error {
	kind, err := kind.withDefaults()
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.byGVK == nil {
		k.byGVK, k.byType = map[schema.GroupVersionKind]Kind{}, map[reflect.Type]schema.GroupVersionKind{}
	}
	k.byGVK[kind.GroupVersionKind] = kind
	for _, t := range []reflect.Type{reflect.TypeOf(kind.New()), reflect.TypeOf(kind.NewList())} {
		if !isUnstructuredType(t) {
			k.byType[t] = kind.GroupVersionKind
		}
	}
	return nil
}

// Get returns the kind registered for gvk.
func (k *Kinds) Get(gvk schema.GroupVersionKind) (Kind, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	kind, ok := k.byGVK[gvk]
	return kind, ok
}

// All returns every registered kind, ordered by GroupVersionKind.
func (k *Kinds) All() []Kind {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := make([]Kind, 0, len(k.byGVK))
	for _, kind := range k.byGVK {
		out = append(out, kind)
	}
	slices.SortFunc(out, func(a, b Kind) int {
		return strings.Compare(a.GroupVersionKind.String(), b.GroupVersionKind.String())
	})
	return out
}

// KindFor returns the kind of obj, an object or a list: by its Go type, or
// for unstructured objects by their apiVersion and kind (a list's kind
// without the "List" suffix). An unknown kind is ErrUnknownKind.
func (k *Kinds) KindFor(obj runtime.Object) (Kind, error) {
	if obj == nil {
		return Kind{}, fmt.Errorf("%w: nil object", ErrUnknownKind)
	}
	t := reflect.TypeOf(obj)
	if isUnstructuredType(t) {
		gvk := obj.GetObjectKind().GroupVersionKind()
		if _, isList := obj.(*unstructured.UnstructuredList); isList {
			gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		}
		if kind, ok := k.Get(gvk); ok {
			return kind, nil
		}
		return Kind{}, fmt.Errorf("%w: %T with apiVersion %q and kind %q", ErrUnknownKind, obj, gvk.GroupVersion(), gvk.Kind)
	}
	k.mu.RLock()
	gvk, ok := k.byType[t]
	kind := k.byGVK[gvk]
	k.mu.RUnlock()
	if !ok {
		return Kind{}, fmt.Errorf("%w: %T", ErrUnknownKind, obj)
	}
	return kind, nil
}

func isUnstructuredType(t reflect.Type) bool {
	return t == reflect.TypeFor[*unstructured.Unstructured]() || t == reflect.TypeFor[*unstructured.UnstructuredList]()
}
