package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lockClient takes and releases per-key locks over the HTTP API.
type lockClient struct {
	client *http.Client
	m      string
}

type lockToken struct {
	Epoch uint64 `json:"epoch"`
	Seq   uint64 `json:"seq"`
}

func (t lockToken) less(u lockToken) bool {
	return t.Epoch < u.Epoch || t.Epoch == u.Epoch && t.Seq < u.Seq
}

// lock asks addr for key's lock: the status (0: no answer) and the token.
func (c *lockClient) lock(addr, key, owner, wait, lease string) (int, lockToken) {
	url := fmt.Sprintf("http://%s/v1/maps/%s/locks/%s?owner=%s&wait=%s&lease=%s", addr, c.m, key, owner, wait, lease)
	resp, err := c.client.Post(url, "", nil)
	if err != nil {
		return 0, lockToken{}
	}
	defer resp.Body.Close()
	var ans struct {
		Token lockToken `json:"token"`
	}
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
			return 0, lockToken{}
		}
	}
	return resp.StatusCode, ans.Token
}

// unlock releases one hold: the status (0: no answer).
func (c *lockClient) unlock(addr, key, owner string) int {
	req, _ := http.NewRequest(http.MethodDelete, fmt.Sprintf("http://%s/v1/maps/%s/locks/%s?owner=%s", addr, c.m, key, owner), nil)
	resp, err := c.client.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// Three member processes; holders contend for a few keys through two of
// them while the third, which owns partitions and backs others up, is
// SIGKILLed. No two holders ever hold a key at once, each acquisition's
// fencing token is above the previous one of its key, no holder finds its
// lock gone when it unlocks, and a lock taken through the killed member
// is released long before its one-hour lease.
func TestClusterProcessesLockMutualExclusion(t *testing.T) {
	c := testCluster(t, "locks", 3)
	startMembers(t, c, 3)
	addrs := c.addrs()
	via, victim := []string{addrs[0], addrs[2]}, addrs[1]
	lc := &lockClient{client: &http.Client{Timeout: 30 * time.Second}, m: "engine_lockedMetrics"}

	// A lock held through the member that will die.
	if code, _ := lc.lock(victim, "orphan", "victim-owner", "0s", "1h"); code != http.StatusOK {
		t.Fatalf("lock through %s: status %d", victim, code)
	}

	// As many keys as holders, held for a while: when the member dies,
	// many keys it owns or backs up are locked.
	var keys []string
	for i := range 12 {
		keys = append(keys, fmt.Sprint("k", i))
	}
	type guard struct {
		mu     sync.Mutex
		holder string
		last   lockToken
	}
	guards := map[string]*guard{}
	for _, k := range keys {
		guards[k] = &guard{}
	}
	var acquired, violations atomic.Int64
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			owner := fmt.Sprint("w", w)
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for ctx.Err() == nil {
				k := keys[rng.IntN(len(keys))]
				addr := via[rng.IntN(len(via))]
				code, tok := lc.lock(addr, k, owner, "2s", "20s")
				switch code {
				case http.StatusConflict:
					continue
				case http.StatusOK:
				default:
					// Unknown outcome: release any hold it may have taken.
					for range 3 {
						if lc.unlock(via[0], k, owner) != http.StatusNoContent {
							break
						}
					}
					time.Sleep(10 * time.Millisecond)
					continue
				}
				g := guards[k]
				g.mu.Lock()
				if g.holder != "" {
					violations.Add(1)
					t.Errorf("%s: %s acquired while %s holds it", k, owner, g.holder)
				}
				if !g.last.less(tok) {
					violations.Add(1)
					t.Errorf("%s: token %v not above the previous %v", k, tok, g.last)
				}
				g.holder, g.last = owner, tok
				g.mu.Unlock()
				acquired.Add(1)
				time.Sleep(20 * time.Millisecond)
				g.mu.Lock()
				g.holder = ""
				g.mu.Unlock()
				for try := 0; ; try++ {
					code := lc.unlock(via[try%2], k, owner)
					if code == http.StatusNoContent || try > 0 && code == http.StatusConflict {
						break
					}
					if code == http.StatusConflict || try == 10 {
						violations.Add(1)
						t.Errorf("%s: unlock by %s: status %d (try %d)", k, owner, code, try)
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	waitCount := func(what string, n int64) {
		t.Helper()
		deadline := time.Now().Add(90 * time.Second)
		for acquired.Load() < n {
			if time.Now().After(deadline) {
				stop()
				wg.Wait()
				t.Fatalf("%s: %d acquisitions, want %d within 90s", what, acquired.Load(), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitCount("before the SIGKILL", 200)
	c.kill(c.nodes[1])
	killed := time.Now()
	code, _ := lc.lock(via[0], "orphan", "survivor", "60s", "1m")
	if code != http.StatusOK {
		t.Errorf("the dead member's lock: status %d after %v, want it released", code, time.Since(killed).Round(time.Millisecond))
	} else {
		t.Logf("the dead member's lock released within %v of the SIGKILL", time.Since(killed).Round(time.Millisecond))
	}
	waitCount("after the SIGKILL", acquired.Load()+200)
	stop()
	wg.Wait()
	t.Logf("%d acquisitions, %d violations", acquired.Load(), violations.Load())
	if violations.Load() > 0 {
		t.Fatalf("%d violations of mutual exclusion or fencing order", violations.Load())
	}
}
