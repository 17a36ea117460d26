// Package widget is a small, complete example API type for listwatch: a
// namespaced Widget with Kubernetes' ObjectMeta, the deep-copy methods
// deepcopy-gen would generate (written by hand here), scheme registration,
// a JSON codec and the helpers the storage layers take (NewFunc,
// NewListFunc, KeyFunc, GetAttrs, storage keys).
//
// Import it to try listwatch, or copy this directory into your module and
// rename the type: it uses only public packages (apimachinery, kube-openapi and
// listwatch's storage package).
//
// # Keys
//
// Objects live under KeyRoot ("/widgets"): a Widget's key is
// KeyRoot/<namespace>/<name> (Key, KeyOf), a namespace's Widgets are listed
// and watched recursively under NamespaceKey. Stores and cachers are
// configured with ResourcePrefix: KeyRoot.
//
//	store, _ := etcd3.New(etcd3.Config{Client: client, Codec: widget.Codec,
//		NewFunc: widget.New, NewListFunc: widget.NewList, ResourcePrefix: widget.KeyRoot})
//	w := widget.NewWidget("default", "w1")
//	err := store.Create(ctx, widget.Key("default", "w1"), w, &widget.Widget{}, 0)
package widget
