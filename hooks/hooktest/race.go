//go:build race

package hooktest

// Race tells whether the race detector is on: it multiplies memory use,
// so memory bounds are only logged under it.
const Race = true
