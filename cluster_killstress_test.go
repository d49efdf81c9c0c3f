package stowage_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/partition"
)

// keyWrites is one key's writes, in the order its single writer made
// them: the value, the member it went through and whether it was
// acknowledged.
type keyWrites struct {
	vals []string
	via  []string
	ok   []bool
	errs []string
}

// An owner dies at a random point of its keys' writes while the requests
// of the members are delayed at random (a delay in the network hook holds
// a request before delivery, also one the dying member sent before its
// transport closed): after the fail-over each key reads as its last
// acknowledged value or one whose write failed, never an older
// acknowledged one. The owner is killed, or dropped by failure detection
// first and killed a little later (its partitions are taken over while it
// still writes). Short scenarios, each a fresh cluster;
// STOWAGE_KILL_ROUNDS=n runs n of them.
func TestClusterOwnerKilledMidWrite(t *testing.T) {
	rounds := 3
	if s := os.Getenv("STOWAGE_KILL_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	for round := range rounds {
		seed := uint64(time.Now().UnixNano()) + uint64(round)
		if !t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { killMidWrite(t, seed) }) {
			return
		}
	}
}

func killMidWrite(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	tc := newTCluster(t, memoryConfig(1, 0))
	for range 3 {
		tc.add()
	}
	tc.waitLoaded()
	// The replica sets are read once below.
	waitBalanced(t, tc)
	waitSafe(t, tc)
	ms := tc.live()
	victim, backup := ms[1], ms[2]
	// Keys owned by the victim and backed up by the other member.
	var keys []string
	for i := 0; len(keys) < 6; i++ {
		if i == 100000 {
			t.Fatalf("no key with replicas %s, %s", victim.id, backup.id)
		}
		k := fmt.Sprintf("kill-%d", i)
		p := partition.Of([]byte(k), partition.DefaultCount)
		if slices.Equal(ms[0].node.Replicas(p), []string{victim.id, backup.id}) {
			keys = append(keys, k)
		}
	}
	maxDelay := time.Duration(rng.IntN(3000)) * time.Microsecond
	tc.net.SetHook(func(from, to, method string) error {
		if from == victim.id || to == victim.id {
			if d := time.Duration(rand.Int64N(int64(maxDelay) + 1)); d > maxDelay/2 {
				time.Sleep(d)
			}
		}
		return nil
	})
	defer tc.net.SetHook(nil)

	var mu sync.Mutex
	hist := map[string]*keyWrites{}
	acks := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, k := range keys {
		hist[k] = &keyWrites{}
	}
	for w, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wr := rand.New(rand.NewPCG(seed, uint64(w)+100))
			// Each key gets a few writes: some keys' last one comes
			// before the owner dies, some around it, some after.
			n := 1 + wr.IntN(8)
			for i := 0; i < n; i++ {
				select {
				case <-stop:
					return
				default:
				}
				live := tc.live()
				via := live[wr.IntN(len(live))]
				val := fmt.Sprintf("%s=%d", k, i)
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				m, err := stowage.GetMap(ctx, via.node, "jobs", strCodec, strCodec)
				if err == nil {
					err = m.Put(ctx, k, val)
				}
				cancel()
				mu.Lock()
				h := hist[k]
				h.vals = append(h.vals, val)
				h.via = append(h.via, via.id)
				h.ok = append(h.ok, err == nil)
				es := ""
				if err != nil {
					es = err.Error()
				}
				h.errs = append(h.errs, es)
				if err == nil {
					acks++
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(time.Millisecond)
				}
			}
		}()
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return acks
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	waitFor := func(n int) {
		deadline := time.Now().Add(longStop)
		for count() < n {
			select {
			case <-finished:
				return // every writer is done
			default:
			}
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				fatalDump(t, "only %d of %d writes acknowledged", count(), n)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	waitFor(rng.IntN(3 * len(keys)))
	if rng.IntN(2) == 0 {
		tc.kill(victim)
	} else {
		// Failure detection first: the others take its partitions over
		// while it still runs (and writes) a little longer.
		tc.drop(victim)
		time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		victim.tr.Close()
		victim.node.Close()
	}
	select {
	case <-finished:
	case <-time.After(longStop):
		close(stop)
		wg.Wait()
		fatalDump(t, "writers not done within %s", longStop)
	}
	wg.Wait()
	tc.net.SetHook(nil)

	for _, via := range []*tmember{ms[0], backup} {
		m := strMap(t, via.node, "jobs")
		for _, k := range keys {
			ctx, cancel := context.WithTimeout(context.Background(), longStop)
			got, ok, err := m.Get(ctx, k)
			cancel()
			if err != nil {
				t.Fatalf("get %s via %s: %v", k, via.id, err)
			}
			h := hist[k]
			last := -1
			for i, a := range h.ok {
				if a {
					last = i
				}
			}
			at := slices.Index(h.vals, got)
			switch {
			case !ok && last < 0:
			case ok && at >= 0 && (at >= last || !h.ok[at]):
				if at < last {
					t.Logf("%s via %s: a failed write (%s) landed after the acknowledged %s", k, via.id, got, h.vals[last])
				}
			default:
				var b strings.Builder
				for i, v := range h.vals {
					fmt.Fprintf(&b, "\n  %s via %s ok=%v %s", v, h.via[i], h.ok[i], h.errs[i])
				}
				t.Errorf("%s via %s = %q (present %v), last acknowledged #%d; writes (victim %s, backup %s):%s", k, via.id, got, ok, last, victim.id, backup.id, b.String())
			}
		}
	}
}
