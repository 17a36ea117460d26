package reflector

// ring is an unbounded FIFO of T backed by a circular slice that doubles
// when full. It is not safe for concurrent use: a listener's pop goroutine
// owns it.
type ring[T any] struct {
	data []T
	head int // index of the oldest element
	n    int // number of elements
}

const ringInitialSize = 16

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.data) {
		r.grow()
	}
	r.data[(r.head+r.n)%len(r.data)] = v
	r.n++
}

func (r *ring[T]) pop() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	v := r.data[r.head]
	r.data[r.head] = zero // drop the reference for the GC
	r.head = (r.head + 1) % len(r.data)
	r.n--
	if r.n == 0 && len(r.data) > 4*ringInitialSize {
		r.data, r.head = nil, 0 // a drained burst gives its memory back
	}
	return v, true
}

func (r *ring[T]) grow() {
	size := 2 * len(r.data)
	if size == 0 {
		size = ringInitialSize
	}
	data := make([]T, size)
	for i := 0; i < r.n; i++ {
		data[i] = r.data[(r.head+i)%len(r.data)]
	}
	r.data, r.head = data, 0
}
