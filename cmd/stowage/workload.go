package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// keyState is what a writer knows of one key: the last acknowledged
// outcome, and a write whose outcome is unknown because the node died.
type keyState struct {
	acked     bool   // some write of the key was acknowledged
	value     string // last acknowledged value ("" with deleted)
	deleted   bool
	inflight  bool
	inValue   string
	inDeleted bool
	// earlier holds the writes whose outcome is unknown that a later write
	// of the key took over from as the one in flight before any was
	// acknowledged (the member died under them, and a writer that found
	// it gone tried the key again): any of them may have become durable.
	earlier []flight
}

type flight struct {
	value   string
	deleted bool
}

// workload writes job state through the HTTP API from several writers,
// each owning its own keys, and remembers what was acknowledged.
type workload struct {
	mapName string
	writers int
	keys    int // per writer
	client  *http.Client

	mu    sync.Mutex
	state map[string]*keyState
	acks  int
	fails int
}

func newWorkload(mapName string, writers, keysPerWriter int) *workload {
	return &workload{mapName: mapName, writers: writers, keys: keysPerWriter, state: map[string]*keyState{},
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: writers}}}
}

func (w *workload) url(addr, key string) string {
	return "http://" + addr + "/v1/maps/" + url.PathEscape(w.mapName) + "/entries/" + key
}

// acked returns how many writes were acknowledged so far.
func (w *workload) acked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.acks
}

// run writes until ctx is done or each writer made ops operations (0: no
// limit), each operation through a member picked from addrs (read anew
// each time, so that the caller can drop a member it killed). A write
// whose member died stays in flight and the writer goes on elsewhere.
func (w *workload) run(ctx context.Context, addrs func() []string, ops int, seed uint64) {
	var wg sync.WaitGroup
	for i := 0; i < w.writers; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for n := 0; ops == 0 || n < ops; n++ {
				if ctx.Err() != nil {
					return
				}
				as := addrs()
				if len(as) == 0 {
					return
				}
				key := fmt.Sprintf("job-%02d-pipeline-%03d", id, rng.IntN(w.keys))
				del := rng.IntN(10) == 0
				val := fmt.Sprintf("checkpoint=%d writer=%d op=%d state=%x", n, id, n, rng.Uint64())
				if !w.op(ctx, as[rng.IntN(len(as))], key, val, del) {
					select {
					case <-ctx.Done():
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
			}
		}(i)
	}
	wg.Wait()
}

// op performs one write and records its outcome; false means the node is gone.
func (w *workload) op(ctx context.Context, addr, key, val string, del bool) bool {
	w.mu.Lock()
	st := w.state[key]
	if st == nil {
		st = &keyState{}
		w.state[key] = st
	}
	if st.inflight {
		st.earlier = append(st.earlier, flight{st.inValue, st.inDeleted})
	}
	st.inflight, st.inValue, st.inDeleted = true, val, del
	w.mu.Unlock()
	method := http.MethodPut
	var body io.Reader = bytes.NewReader([]byte(val))
	if del {
		method, body = http.MethodDelete, nil
	}
	req, _ := http.NewRequestWithContext(ctx, method, w.url(addr, key), body)
	resp, err := w.client.Do(req)
	if err != nil {
		return false // outcome unknown: stays in flight
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusNoContent || (del && resp.StatusCode == http.StatusNotFound):
		st.acked, st.value, st.deleted, st.inflight, st.earlier = true, val, del, false, nil
		if del {
			st.value = ""
		}
		w.acks++
	case resp.StatusCode == http.StatusGatewayTimeout || resp.StatusCode == http.StatusServiceUnavailable:
		// The member could not tell (its partition's owner went away
		// mid-write, or it is shutting down): the write stays in flight.
		w.fails++
		return false
	default:
		// A refused write changed nothing.
		st.inflight = false
		w.fails++
	}
	return true
}

// verify reads every key back and returns the keys whose value is
// neither the last acknowledged one nor the one in flight at the kill.
func (w *workload) verify(ctx context.Context, addr string) (checked int, bad []string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, st := range w.state {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, w.url(addr, key), nil)
		resp, err := w.client.Do(req)
		if err != nil {
			return checked, bad, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got, present := string(b), resp.StatusCode == http.StatusOK
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
			return checked, bad, fmt.Errorf("GET %s: %s", key, resp.Status)
		}
		ok := false
		if st.acked {
			ok = (st.deleted && !present) || (!st.deleted && present && got == st.value)
		} else {
			ok = !present // never acknowledged: absent, unless in flight
		}
		if !ok && st.inflight {
			ok = (st.inDeleted && !present) || (!st.inDeleted && present && got == st.inValue)
		}
		for _, e := range st.earlier {
			ok = ok || (e.deleted && !present) || (!e.deleted && present && got == e.value)
		}
		checked++
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: got %q (present %v), last acknowledged %q (deleted %v)", key, got, present, st.value, st.deleted))
		}
		// The value read is now the truth for the next round.
		st.acked, st.inflight, st.deleted, st.value, st.earlier = true, false, !present, got, nil
		if !present {
			st.value = ""
		}
	}
	return checked, bad, nil
}
