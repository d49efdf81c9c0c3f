package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// WriteBehindResult compares Map.Put on a write-behind map with Map.Put
// on a write-through map of the same store, node and settings.
type WriteBehindResult struct {
	Delay          time.Duration
	Through        float64       // write-through puts/s
	Behind         float64       // write-behind puts/s, acknowledged (in memory)
	Flush          time.Duration // Flush of what the write-behind run queued
	BehindAndFlush float64       // write-behind puts/s counting the Flush
}

// behindConfig is TargetConfig with a second pattern, benchwb*, whose maps
// are written behind with delay.
func behindConfig(t Target, delay time.Duration) (*config.Config, error) {
	props := map[string]string{"type": "hdfs", "namespace": t.Namespace, "clusterName": "bench"}
	for k, v := range t.Props {
		props[k] = v
	}
	var pb strings.Builder
	for k, v := range props {
		fmt.Fprintf(&pb, "          %s: %q\n", k, v)
	}
	// The queue's bound is set above what one run queues: the bench
	// measures puts, not refusals.
	y := "hazelcast:\n  cluster-name: bench\n  properties:\n    hazelcast.map.write.behind.queue.capacity: 100000000\n  map:\n" +
		"    bench*:\n      map-store:\n        enabled: true\n        initial-mode: EAGER\n        properties:\n" + pb.String() +
		fmt.Sprintf("    benchwb*:\n      map-store:\n        enabled: true\n        initial-mode: EAGER\n        write-delay-seconds: %d\n        write-batch-size: 1000\n        write-coalescing: true\n        properties:\n", int(delay/time.Second)) +
		pb.String()
	return config.Parse(nil, []byte(y))
}

// WriteBehind measures Map.Put of writers goroutines, n puts each of
// valueSize-byte values, on a write-through map and on a write-behind map
// (write-delay-seconds delay, whole seconds) of one member alone, then
// the Flush of what the write-behind run queued.
func WriteBehind(ctx context.Context, t Target, delay time.Duration, writers, n, valueSize int) (WriteBehindResult, error) {
	res := WriteBehindResult{Delay: delay}
	cfg, err := behindConfig(t, delay)
	if err != nil {
		return res, err
	}
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
	if err != nil {
		return res, err
	}
	defer node.Close()
	if err := node.WaitLoaded(ctx); err != nil {
		return res, err
	}
	run := func(name string) (float64, *stowage.Map[string, []byte], error) {
		m, err := stowage.GetMap(ctx, node, name, serde.String(), serde.Bytes())
		if err != nil {
			return 0, nil, err
		}
		value := make([]byte, valueSize)
		start := time.Now()
		var wg sync.WaitGroup
		errc := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range n {
					if err := m.Put(ctx, string(appendKey(nil, w, i)), value); err != nil {
						errc <- err
						return
					}
				}
			})
		}
		wg.Wait()
		el := time.Since(start)
		close(errc)
		if err := <-errc; err != nil {
			return 0, nil, err
		}
		return float64(writers*n) / el.Seconds(), m, nil
	}
	if res.Through, _, err = run("bench_through"); err != nil {
		return res, err
	}
	var m *stowage.Map[string, []byte]
	start := time.Now()
	if res.Behind, m, err = run("benchwb_behind"); err != nil {
		return res, err
	}
	fstart := time.Now()
	if err := m.Flush(ctx); err != nil {
		return res, err
	}
	res.Flush = time.Since(fstart)
	res.BehindAndFlush = float64(writers*n) / time.Since(start).Seconds()
	return res, nil
}
