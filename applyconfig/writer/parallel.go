package writer

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// forEach runs fn for 0..n-1 on up to GOMAXPROCS goroutines, taking no
// new index once one has failed, and returns the lowest index that failed
// with its error (-1, nil if none), so that the error reported is the one
// a loop in order would have stopped at.
// Planning and staging are a few system calls per file, a thousand files
// on a first render: on one goroutine the other cores sit idle.
func forEach(n int, fn func(i int) error) (int, error) {
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			if errs[i] = fn(i); errs[i] != nil {
				failed.Store(true)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}
