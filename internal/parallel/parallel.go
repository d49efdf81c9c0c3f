// Package parallel runs a loop's iterations on a bounded number of
// goroutines.
package parallel

import "sync"

// Do calls fn(0), ..., fn(count-1) on at most workers goroutines (at
// least one) and returns once every call has.
func Do(workers, count int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(max(workers, 1), count); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < count; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}
