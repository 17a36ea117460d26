package pack

import (
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// Packer makes what a watch cache keeps take less memory without changing
// its value. A cache has one, from New, or from Off when its packing is
// turned off. Every method is safe for concurrent use.
type Packer interface {
	// Object rewrites obj, a decoded object the cache is about to keep,
	// in place: strings and map[string]string values that repeat at the
	// same place across objects become one shared copy. The object must
	// be the cache's own: no one may read it while it is rewritten, and
	// no one may modify it afterwards (what it holds is shared).
	Object(obj runtime.Object)
	// Labels returns a label set equal to l, the same map for every
	// equal set it was given, for a cache that keeps the label set
	// apart from an encoded object. l must not be modified afterwards.
	Labels(l map[string]string) map[string]string
	// Layout returns enc, key and vals as strings for an encoded
	// element: in one allocation when the allocator's size classes make
	// that no larger than three. enc is copied, not kept.
	Layout(enc []byte, key, vals string) (raw, k, v string)
	// Hold returns a weak reference to obj, a decoded object of an
	// encoded element, or nil when obj is not one the Packer can refer
	// to weakly (or packing is off): the element then decodes again on
	// each read.
	Hold(obj runtime.Object) *Ref
	// Held returns the object r refers to, or nil once it was collected.
	Held(r *Ref) runtime.Object
}

// New returns a Packer that applies every trick of the package.
func New() Packer { return &packer{} }

// Off returns a Packer that changes nothing: objects are kept as given,
// label sets as given, encoded elements in three allocations, and
// decoded objects of encoded elements are not shared between reads.
func Off() Packer { return off{} }

// packer is New's Packer.
type packer struct {
	// mu guards objects: one object is rewritten at a time.
	mu      sync.Mutex
	objects objects
	labels  syncMaps
	types   objectType
}

func (p *packer) Object(obj runtime.Object) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.objects.rewrite(obj)
}

func (p *packer) Labels(l map[string]string) map[string]string { return p.labels.share(l) }

func (p *packer) Layout(enc []byte, key, vals string) (string, string, string) {
	return layout(enc, key, vals)
}

func (p *packer) Hold(obj runtime.Object) *Ref { return p.types.hold(obj) }

func (p *packer) Held(r *Ref) runtime.Object { return p.types.held(r) }

// off is Off's Packer.
type off struct{}

func (off) Object(runtime.Object) {}

func (off) Labels(l map[string]string) map[string]string { return l }

func (off) Layout(enc []byte, key, vals string) (string, string, string) {
	return string(enc), key, vals
}

func (off) Hold(runtime.Object) *Ref { return nil }

func (off) Held(*Ref) runtime.Object { return nil }
