package demorun

import "time"

// Default sets *v to def when *v is zero or negative: how a demo's
// Options take their defaults field by field.
func Default[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
