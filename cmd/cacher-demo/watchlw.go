package main

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/reflector"
)

// optionsLW adds the watch command's label selector to every request and,
// when a start RV is given, answers the first List with an empty list at
// that RV so the informer starts watching right after it.
type optionsLW struct {
	inner    reflector.ListerWatcher
	selector string

	mu      sync.Mutex
	startRV string
}

func withWatchOptions(lw reflector.ListerWatcher, startRV, selector string) reflector.ListerWatcher {
	return &optionsLW{inner: lw, selector: selector, startRV: startRV}
}

func (o *optionsLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	o.mu.Lock()
	rv := o.startRV
	o.startRV = ""
	o.mu.Unlock()
	if rv != "" {
		l := &unstructured.UnstructuredList{}
		l.SetResourceVersion(rv)
		return l, nil
	}
	opts.LabelSelector = o.selector
	return o.inner.List(ctx, opts)
}

func (o *optionsLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	opts.LabelSelector = o.selector
	return o.inner.Watch(ctx, opts)
}
