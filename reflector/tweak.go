package reflector

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// TweakListOptions returns a ListerWatcher that applies tweak to the
// options of every List and Watch before passing them to lw, as client-go's
// WithTweakListOptions does: for example a label selector, or a
// ShardSelector so that a reflector or informer holds one shard of a
// resource:
//
//	lw = reflector.TweakListOptions(lw, func(o *metav1.ListOptions) {
//		o.ShardSelector = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
//	})
func TweakListOptions(lw ListerWatcher, tweak func(*metav1.ListOptions)) ListerWatcher {
	return tweakedLW{lw: lw, tweak: tweak}
}

type tweakedLW struct {
	lw    ListerWatcher
	tweak func(*metav1.ListOptions)
}

func (t tweakedLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	t.tweak(&opts)
	return t.lw.List(ctx, opts)
}

func (t tweakedLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	t.tweak(&opts)
	return t.lw.Watch(ctx, opts)
}
