package stowage

import (
	"context"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Calls to one member are group-sent, the way the map store group-commits:
// while a batch is on its way, the calls made meanwhile queue up, and the
// next batch carries all of them in one transport call. There is no fixed
// delay: a call alone goes at once. The callee runs the batch's calls
// concurrently and answers each; a transport failure fails every call of
// the batch with the same error (and so the same delivery guarantee).

// mBatch carries several calls in one.
const mBatch = "batch"

type batchReq struct {
	Method string   `msgpack:"m"`
	Items  [][]byte `msgpack:"i"`
}

type batchAns struct {
	Items  [][]byte `msgpack:"i"`
	Errors []string `msgpack:"e"` // "" where the call succeeded
}

// maxBatch bounds the calls of one batch.
const maxBatch = 256

type batchKey struct{ addr, method string }

type pendingCall struct {
	ctx  context.Context
	body []byte
	done chan batchResult
}

type batchResult struct {
	b   []byte
	err error
}

type batcher struct {
	mu      sync.Mutex
	queue   []*pendingCall
	sending bool
}

// batched sends one call to the member at addr as part of a batch.
func (d *dist) batched(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	key := batchKey{addr, method}
	d.bmu.Lock()
	b := d.batchers[key]
	if b == nil {
		b = &batcher{}
		d.batchers[key] = b
	}
	d.bmu.Unlock()
	pc := &pendingCall{ctx: ctx, body: body, done: make(chan batchResult, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, pc)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start && !d.goBackground(func() { d.sendBatches(addr, method, b) }) {
		return nil, ErrClosed
	}
	select {
	case r := <-pc.done:
		return r.b, r.err
	case <-ctx.Done():
		// The call may still go out with its batch: its outcome is unknown.
		return nil, ctx.Err()
	}
}

// sendBatches sends what queued for addr until the queue is empty.
func (d *dist) sendBatches(addr, method string, b *batcher) {
	for {
		b.mu.Lock()
		n := min(len(b.queue), maxBatch)
		if n == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()

		live := batch[:0:0]
		for _, pc := range batch {
			if err := pc.ctx.Err(); err != nil {
				pc.done <- batchResult{err: err} // never sent
				continue
			}
			live = append(live, pc)
		}
		if len(live) == 0 {
			continue
		}
		if len(live) == 1 {
			resp, err := d.rpc(live[0].ctx, addr, method, live[0].body)
			live[0].done <- batchResult{resp, err}
			continue
		}
		req := batchReq{Method: method, Items: make([][]byte, len(live))}
		deadline := time.Now().Add(d.timeout)
		for i, pc := range live {
			req.Items[i] = pc.body
			if dl, ok := pc.ctx.Deadline(); ok && dl.After(deadline) {
				deadline = dl
			}
		}
		ctx, cancel := context.WithDeadline(d.ctx, deadline)
		resp, err := d.rpc(ctx, addr, mBatch, enc(req))
		cancel()
		var ans batchAns
		if err == nil {
			err = dec(resp, &ans)
			if err == nil && (len(ans.Items) != len(live) || len(ans.Errors) != len(live)) {
				err = errBadMessage
			}
		}
		for i, pc := range live {
			switch {
			case err != nil:
				pc.done <- batchResult{err: err}
			case ans.Errors[i] != "":
				pc.done <- batchResult{err: &cluster.RemoteError{Addr: addr, Method: method, Message: ans.Errors[i]}}
			default:
				pc.done <- batchResult{b: ans.Items[i]}
			}
		}
	}
}

// onBatch runs a batch's calls concurrently and answers each.
func (d *dist) onBatch(ctx context.Context, from string, req *batchReq) batchAns {
	ans := batchAns{Items: make([][]byte, len(req.Items)), Errors: make([]string, len(req.Items))}
	var wg sync.WaitGroup
	for i, body := range req.Items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := d.handle(ctx, from, req.Method, body)
			if err != nil {
				ans.Errors[i] = err.Error()
				return
			}
			ans.Items[i] = b
		}()
	}
	wg.Wait()
	return ans
}
