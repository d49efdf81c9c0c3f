package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/serde"
)

// writers write their own keys, each key's values in increasing order,
// through a random live member. A key's acknowledged value must be read
// back at the end, or a later one whose write failed (its outcome is
// unknown).
type writers struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	acked  atomic.Int64
	failed atomic.Int64

	mu        sync.Mutex
	ackedSeq  map[string]int // key → highest acknowledged value
	triedSeq  map[string]int // key → highest value written
	sim       *sim
	keys, wrs int
}

func (s *sim) startWriters(ctx context.Context) *writers {
	wctx, cancel := context.WithCancel(ctx)
	w := &writers{cancel: cancel, ackedSeq: map[string]int{}, triedSeq: map[string]int{}, sim: s, keys: s.o.Keys, wrs: s.o.Writers}
	for i := range s.o.Writers {
		w.wg.Add(1)
		go w.run(wctx, i)
	}
	return w
}

func (w *writers) stop() {
	w.cancel()
	w.wg.Wait()
}

func key(writer, k int) string { return "w" + strconv.Itoa(writer) + "-k" + strconv.Itoa(k) }

func (w *writers) run(ctx context.Context, id int) {
	defer w.wg.Done()
	rng := rand.New(rand.NewPCG(uint64(id), 7))
	seq := map[string]int{}
	for ctx.Err() == nil {
		live := w.sim.live()
		if len(live) == 0 {
			time.Sleep(time.Millisecond)
			continue
		}
		m := live[rng.IntN(len(live))]
		k := key(id, rng.IntN(w.keys))
		seq[k]++
		v := seq[k]
		w.mu.Lock()
		w.triedSeq[k] = v
		w.mu.Unlock()
		err := w.put(ctx, m, k, v)
		if err != nil {
			if ctx.Err() == nil {
				w.failed.Add(1)
			}
			continue
		}
		w.acked.Add(1)
		w.mu.Lock()
		if v > w.ackedSeq[k] {
			w.ackedSeq[k] = v
		}
		w.mu.Unlock()
		time.Sleep(time.Millisecond) // a steady trickle, not a load test
	}
}

func (w *writers) put(ctx context.Context, m *member, k string, v int) error {
	mp, err := stowage.GetMap(ctx, m.node, mapName, serde.String(), serde.String())
	if err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return mp.Put(pctx, k, strconv.Itoa(v))
}

// verify reads every written key through the oldest live member and
// counts the keys whose acknowledged value is missing.
func (w *writers) verify(ctx context.Context, s *sim) (int64, error) {
	live := s.live()
	if len(live) == 0 {
		return 0, fmt.Errorf("sim: no member left to read through")
	}
	mp, err := stowage.GetMap(ctx, live[0].node, mapName, serde.String(), serde.String())
	if err != nil {
		return 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var lost int64
	for k, acked := range w.ackedSeq {
		got, found, err := mp.Get(ctx, k)
		if err != nil {
			return lost, fmt.Errorf("sim: read %s: %w", k, err)
		}
		n, _ := strconv.Atoi(got)
		if !found || n < acked || n > w.triedSeq[k] {
			lost++
		}
	}
	return lost, nil
}
