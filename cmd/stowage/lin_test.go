package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// linHistory records map operations through the HTTP API of several
// members, with their call and return times, so that the whole history can
// be checked for linearizability: every operation must appear to take
// effect at one instant between its call and its return, in an order a
// single map would allow.
type linHistory struct {
	mapName string
	keys    int
	client  *http.Client

	mu   sync.Mutex
	ops  []porcupine.Operation
	open []int // ops whose outcome is unknown (their return is set at the end)
	acks int
	// onAck, if set, is told of every acknowledged write: the member that
	// acknowledged it and when the answer came.
	onAck func(addr string, in linIn, ret time.Time)
}

type linIn struct {
	Op    string // "put", "get", "del"
	Key   string
	Value string
	Via   string // the member's HTTP address (set by do; the model ignores it)
}

type linOut struct {
	Value   string
	Found   bool
	Unknown bool // the call failed: it may or may not have taken effect
}

func newLinHistory(mapName string, keys int) *linHistory {
	return &linHistory{mapName: mapName, keys: keys,
		client: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}}
}

// run makes clients do random operations against random members from addrs
// (read anew for each operation) until ctx is done.
func (h *linHistory) run(ctx context.Context, clients int, addrs func() []string, seed uint64) {
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(id)))
			for n := 0; ctx.Err() == nil; n++ {
				as := addrs()
				if len(as) == 0 {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				addr := as[rng.IntN(len(as))]
				key := fmt.Sprintf("job-%02d", rng.IntN(h.keys))
				in := linIn{Op: "get", Key: key}
				switch r := rng.IntN(10); {
				case r < 6:
					in = linIn{Op: "put", Key: key, Value: fmt.Sprintf("c%d-%d", id, n)}
				case r < 7:
					in.Op = "del"
				}
				h.do(ctx, id, addr, in)
			}
		}(c)
	}
	wg.Wait()
}

// do performs one operation, records it and reports whether it was
// answered (a write: acknowledged).
func (h *linHistory) do(ctx context.Context, client int, addr string, in linIn) bool {
	u := "http://" + addr + "/v1/maps/" + url.PathEscape(h.mapName) + "/entries/" + in.Key
	method := map[string]string{"put": http.MethodPut, "get": http.MethodGet, "del": http.MethodDelete}[in.Op]
	var body io.Reader
	if in.Op == "put" {
		body = strings.NewReader(in.Value)
	}
	req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), method, u, body)
	in.Via = addr
	call := time.Now().UnixNano()
	resp, err := h.client.Do(req)
	var out linOut
	ok := false
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case in.Op == "get" && resp.StatusCode == http.StatusOK:
			out, ok = linOut{Value: string(b), Found: true}, true
		case resp.StatusCode == http.StatusNotFound:
			out, ok = linOut{}, true
		case resp.StatusCode == http.StatusNoContent:
			out, ok = linOut{Found: in.Op == "del"}, true
		}
	}
	ret := time.Now().UnixNano()
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case ok:
		h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
		if in.Op != "get" {
			h.acks++
			if h.onAck != nil {
				h.onAck(addr, in, time.Unix(0, ret))
			}
		}
	case in.Op != "get":
		// A failed write may still have taken effect (the member died
		// after making it durable): it may take effect any time after its
		// call, or never.
		h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: linOut{Unknown: true}})
		h.open = append(h.open, len(h.ops)-1)
	}
	return ok
}

func (h *linHistory) acked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.acks
}

// readAll reads every key once through addr, as the history's last
// operations.
func (h *linHistory) readAll(ctx context.Context, addr string) {
	for k := 0; k < h.keys; k++ {
		h.do(ctx, 999, addr, linIn{Op: "get", Key: fmt.Sprintf("job-%02d", k)})
	}
}

// check runs porcupine over the history, partitioned by key.
func (h *linHistory) check(timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo, []porcupine.Operation) {
	h.mu.Lock()
	ops := append([]porcupine.Operation(nil), h.ops...)
	var end int64
	for _, op := range ops {
		end = max(end, op.Return, op.Call)
	}
	for _, i := range h.open {
		ops[i].Return = end + 1
	}
	h.mu.Unlock()
	// A put whose outcome is unknown and whose value no read returned may
	// be taken never to have happened: if the history without it is
	// linearizable, so is the history with it. Each such put left open
	// multiplies the orders the checker tries, so the history without
	// them is checked first, and the whole one only when that is not
	// enough.
	if pruned := withoutUnseenPuts(ops); len(pruned) < len(ops) {
		if res, info := porcupine.CheckOperationsVerbose(kvModel, pruned, timeout/2); res == porcupine.Ok {
			return res, info, ops
		}
	}
	res, info := porcupine.CheckOperationsVerbose(kvModel, ops, timeout)
	return res, info, ops
}

// withoutUnseenPuts returns ops without the puts of unknown outcome whose
// value no get returned (every put writes a value of its own).
func withoutUnseenPuts(ops []porcupine.Operation) []porcupine.Operation {
	seen := map[[2]string]bool{}
	for _, op := range ops {
		in, out := op.Input.(linIn), op.Output.(linOut)
		if in.Op == "get" && out.Found {
			seen[[2]string{in.Key, out.Value}] = true
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in := op.Input.(linIn)
		if in.Op == "put" && op.Output.(linOut).Unknown && !seen[[2]string{in.Key, in.Value}] {
			continue
		}
		out = append(out, op)
	}
	return out
}

// kvState is one key's state in the model.
type kvState struct {
	Found bool
	Value string
}

// kvModel is a map of registers, partitioned by key.
var kvModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range history {
			k := op.Input.(linIn).Key
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(byKey))
		for _, ops := range byKey {
			out = append(out, ops)
		}
		return out
	},
	Init: func() any { return kvState{} },
	Step: func(state, input, output any) (bool, any) {
		st, in, out := state.(kvState), input.(linIn), output.(linOut)
		switch in.Op {
		case "put":
			return true, kvState{Found: true, Value: in.Value}
		case "del":
			if !out.Unknown && out.Found != st.Found {
				return false, st
			}
			return true, kvState{}
		default:
			return out.Found == st.Found && out.Value == st.Value, st
		}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(linIn), output.(linOut)
		switch {
		case out.Unknown:
			return fmt.Sprintf("%s(%s %q) -> ?", in.Op, in.Key, in.Value)
		case in.Op == "get" && !out.Found:
			return fmt.Sprintf("get(%s) -> absent", in.Key)
		case in.Op == "get":
			return fmt.Sprintf("get(%s) -> %q", in.Key, out.Value)
		}
		return fmt.Sprintf("%s(%s %q)", in.Op, in.Key, in.Value)
	},
	DescribeState: func(state any) string {
		st := state.(kvState)
		if !st.Found {
			return "absent"
		}
		return fmt.Sprintf("%q", st.Value)
	},
}
