package demo

import (
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/reflector"
)

// tracker watches the pods of one app label (through the observer's
// informer) and keeps what a check after the fact needs: every pod name
// ever seen per image, and the peak number of pods alive at once.
type tracker struct {
	app string

	mu    sync.Mutex
	alive map[string]bool            // pod keys alive now
	seen  map[string]map[string]bool // image → pod keys ever seen
	peak  int
	// onNew, when set, is called (from the informer's handler goroutine,
	// without the lock) with the image and the count of its pods seen so
	// far, each time a new pod appears.
	onNew func(image string, seen int)
}

// newTracker registers a tracker of app's pods on inf.
func newTracker(inf reflector.SharedInformer[*corev1.Pod], app string) (*tracker, reflector.ResourceEventHandlerRegistration, error) {
	t := &tracker{app: app, alive: map[string]bool{}, seen: map[string]map[string]bool{}}
	reg, err := inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { t.observe(p, false) },
		UpdateFunc: func(_, p *corev1.Pod) { t.observe(p, false) },
		DeleteFunc: func(p *corev1.Pod, _ bool) { t.observe(p, true) },
	})
	return t, reg, err
}

// observe records one event of p.
func (t *tracker) observe(p *corev1.Pod, deleted bool) {
	if p.Labels["app"] != t.app {
		return
	}
	key := p.Namespace + "/" + p.Name
	t.mu.Lock()
	if deleted || p.DeletionTimestamp != nil {
		delete(t.alive, key)
		t.mu.Unlock()
		return
	}
	t.alive[key] = true
	t.peak = max(t.peak, len(t.alive))
	img, n, fresh := "", 0, false
	if len(p.Spec.Containers) > 0 {
		img = p.Spec.Containers[0].Image
		if t.seen[img] == nil {
			t.seen[img] = map[string]bool{}
		}
		fresh = !t.seen[img][key]
		t.seen[img][key] = true
		n = len(t.seen[img])
	}
	hook := t.onNew
	t.mu.Unlock()
	if fresh && hook != nil {
		hook(img, n)
	}
}

// setOnNew sets the hook called for each new pod.
func (t *tracker) setOnNew(f func(image string, seen int)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.onNew = f
}

// resetPeak starts a new peak from the pods alive now and returns the
// previous one.
func (t *tracker) resetPeak() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.peak
	t.peak = len(t.alive)
	return p
}

// created returns how many distinct pods of image were ever seen.
func (t *tracker) created(image string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.seen[image])
}
