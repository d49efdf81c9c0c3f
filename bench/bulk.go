package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// BulkResult compares one PutAll of Entries entries with as many single
// Puts one after the other, on the same persisted map: the median time
// of each over the rounds.
type BulkResult struct {
	Entries, Rounds int
	PutAll, Puts    time.Duration
}

// Bulk measures PutAll of n entries of valueSize bytes against n single
// Puts, alternating, rounds times each, on a member alone.
func Bulk(ctx context.Context, t Target, n, valueSize, rounds int) (BulkResult, error) {
	cfg, err := TargetConfig(t, nil)
	if err != nil {
		return BulkResult{}, err
	}
	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
	if err != nil {
		return BulkResult{}, err
	}
	defer node.Close()
	m, err := stowage.GetMap(ctx, node, "bench_bulk", serde.String(), serde.Bytes())
	if err != nil {
		return BulkResult{}, err
	}
	if err := node.WaitLoaded(ctx); err != nil {
		return BulkResult{}, err
	}
	value := make([]byte, valueSize)
	es := make([]stowage.Entry[string, []byte], n)
	for i := range es {
		es[i] = stowage.Entry[string, []byte]{Key: fmt.Sprint("k", i), Value: value}
	}
	var bulk, single []time.Duration
	for r := 0; r < rounds; r++ {
		start := time.Now()
		if err := m.PutAll(ctx, es); err != nil {
			return BulkResult{}, err
		}
		bulk = append(bulk, time.Since(start))
		start = time.Now()
		for _, e := range es {
			if err := m.Put(ctx, e.Key, e.Value); err != nil {
				return BulkResult{}, err
			}
		}
		single = append(single, time.Since(start))
	}
	slices.Sort(bulk)
	slices.Sort(single)
	return BulkResult{Entries: n, Rounds: rounds, PutAll: bulk[len(bulk)/2], Puts: single[len(single)/2]}, nil
}
