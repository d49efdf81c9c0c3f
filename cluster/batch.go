package cluster

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Over a transport that batches by itself (asyncCaller: TCPTransport's
// pipe), Enqueue hands each call to it, and the calls to one member share
// its connection's writes. Over any other, the code below batches.
//
// Calls to one member are group-sent, the way the map store group-commits:
// while a batch is on its way, the calls made meanwhile queue up, and the
// next batch carries all of them in one transport call. There is no fixed
// delay: a call alone goes at once. The callee runs the batch's calls
// concurrently and answers each; a transport failure fails every call of
// the batch with the same error (and so the same delivery guarantee).

type batchReq struct {
	Method string   `msgpack:"m"`
	Items  [][]byte `msgpack:"i"`
}

type batchAns struct {
	Items  [][]byte `msgpack:"i"`
	Errors []string `msgpack:"e"` // "" where the call succeeded
	// Tickets: non-zero where the call had not finished when the batch
	// was answered; its answer is fetched with mBatchPoll.
	Tickets []uint64 `msgpack:"t,omitempty"`
}

type pollReq struct {
	Ticket uint64 `msgpack:"t"`
}

type pollAns struct {
	Item  []byte `msgpack:"i"`
	Error string `msgpack:"e"`
	Lost  bool   `msgpack:"l"` // no such ticket (expired, or this member restarted)
}

// batchHold bounds how long a batch's answer waits for its slowest call:
// a call that has not finished after it (or well after the batch's other
// calls did) is answered later, by a poll of its own, so that one call
// waiting on a hung member holds up neither the calls it shares a batch
// with nor the batches queued behind it.
const batchHold = 200 * time.Millisecond

// batchItem is one call of a batch being served.
type batchItem struct {
	done     chan struct{} // closed once b and err are set
	b        []byte
	err      error
	finished time.Time
}

// stragglers are the calls of answered batches still running or not yet
// polled, by ticket.
type stragglers struct {
	mu    sync.Mutex
	next  uint64
	items map[uint64]*batchItem
}

// maxBatch bounds the calls of one batch.
const maxBatch = 256

type batchKey struct{ addr, method string }

// PendingCall is a call queued for a batch (Enqueue).
type PendingCall struct {
	ctx  context.Context
	body []byte
	done chan Answer
	head [1 + binary.MaxVarintLen64]byte // room for the request header

	// Over an asyncCaller: the call on the pipe, and who noteFailed
	// hears of its failure.
	call pipeCall
	pr   *Protocol
	addr string
}

// answered delivers the outcome of the call on the pipe.
func (pc *PendingCall) answered(b []byte, err error) {
	pc.pr.noteFailed(pc.addr, err)
	pc.done <- Answer{b, err}
}

// Answer is the result of one call.
type Answer struct {
	Body []byte
	Err  error
}

// asyncCaller is a transport that queues a call without waiting for it
// and batches the calls to one member on its connection (TCPTransport):
// done is called once, and must not block.
type asyncCaller interface {
	CallAsync(ctx context.Context, addr, method string, body []byte, done func([]byte, error))
	// callAsync is CallAsync of a body in two parts, head and body, whose
	// outcome goes to c.to.
	callAsync(ctx context.Context, addr, method string, head, body []byte, c *pipeCall)
}

type batcher struct {
	mu      sync.Mutex
	queue   []*PendingCall
	sending bool
}

// batched sends one call to the member at addr as part of a batch.
func (pr *Protocol) Batched(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	pc, err := pr.Enqueue(ctx, addr, method, body)
	if err != nil {
		return nil, err
	}
	select {
	case r := <-pc.done:
		return r.Body, r.Err
	case <-ctx.Done():
		// The call may still go out with its batch: its outcome is unknown.
		return nil, ctx.Err()
	case <-pr.ctx.Done():
		// Closing: the answer may never come (the call may still have
		// gone out, so its outcome is unknown too).
		return nil, pr.closed
	}
}

// enqueue queues one call to the member at addr for the next batch; its
// result arrives on the returned call's done channel. The batch that
// carries it lasts no longer than the longest-waiting of its callers.
func (pr *Protocol) Enqueue(ctx context.Context, addr, method string, body []byte) (*PendingCall, error) {
	if ac, ok := pr.tr.(asyncCaller); ok {
		// The transport batches by itself: every call to addr shares its
		// connection's writes with the others queued meanwhile.
		if err := pr.ctx.Err(); err != nil {
			return nil, pr.closed
		}
		pc := &PendingCall{ctx: ctx, done: make(chan Answer, 1), pr: pr, addr: addr}
		pc.call.to = pc
		ac.callAsync(ctx, addr, method, pr.appendHeader(pc.head[:0]), body, &pc.call)
		return pc, nil
	}
	key := batchKey{addr, method}
	pr.bmu.Lock()
	b := pr.batchers[key]
	if b == nil {
		b = &batcher{}
		pr.batchers[key] = b
	}
	pr.bmu.Unlock()
	pc := &PendingCall{ctx: ctx, body: pr.frame(body), done: make(chan Answer, 1)}
	b.mu.Lock()
	b.queue = append(b.queue, pc)
	start := !b.sending
	b.sending = true
	b.mu.Unlock()
	if start && !pr.Go(func() { pr.sendBatches(addr, method, b) }) {
		return nil, pr.closed
	}
	return pc, nil
}

// sendBatches sends what queued for addr until the queue is empty.
func (pr *Protocol) sendBatches(addr, method string, b *batcher) {
	var hold *time.Timer
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
				pc.done <- Answer{Err: err} // never sent
				continue
			}
			live = append(live, pc)
		}
		if len(live) == 0 {
			continue
		}
		// The next batch waits for this one's answer, so that calls made
		// meanwhile go together, but never longer than batchHold: a call
		// that takes longer (its member hangs, or the callee is slow)
		// goes on alone and holds up nobody.
		sent := make(chan struct{})
		if !pr.Go(func() { defer close(sent); pr.send(addr, method, live) }) {
			for _, pc := range live {
				pc.done <- Answer{Err: pr.closed}
			}
			continue
		}
		if hold == nil {
			hold = time.NewTimer(batchHold)
		} else {
			hold.Reset(batchHold)
		}
		select {
		case <-sent:
		case <-hold.C:
		case <-pr.ctx.Done():
		}
		hold.Stop()
	}
}

// send makes one transport call of the calls in live, alone or as a batch,
// and answers each.
func (pr *Protocol) send(addr, method string, live []*PendingCall) {
	if len(live) == 1 {
		resp, err := pr.callFramed(live[0].ctx, addr, method, live[0].body)
		live[0].done <- Answer{resp, err}
		return
	}
	req := batchReq{Method: method, Items: make([][]byte, len(live))}
	for i, pc := range live {
		req.Items[i] = pc.body
	}
	ctx, cancel := batchContext(pr.ctx, pr.timeout, live)
	resp, err := pr.Call(ctx, addr, mBatch, Encode(req))
	cancel()
	var ans batchAns
	if err == nil {
		err = Decode(resp, &ans)
		if err == nil && (len(ans.Items) != len(live) || len(ans.Errors) != len(live)) {
			err = ErrBadMessage
		}
	}
	if err == nil && ans.Tickets != nil && len(ans.Tickets) != len(live) {
		err = ErrBadMessage
	}
	for i, pc := range live {
		switch {
		case err != nil:
			pc.done <- Answer{Err: err}
		case ans.Tickets != nil && ans.Tickets[i] != 0:
			ticket := ans.Tickets[i]
			if !pr.Go(func() { pr.poll(addr, method, ticket, pc) }) {
				pc.done <- Answer{Err: pr.closed}
			}
		case ans.Errors[i] != "":
			pc.done <- Answer{Err: &RemoteError{Addr: addr, Method: method, Message: ans.Errors[i]}}
		default:
			pc.done <- Answer{Body: ans.Items[i]}
		}
	}
}

// batchContext bounds one batch the way its calls would be bounded if
// each went alone: it ends once every caller has given up (so a batch to a
// member that hangs does not hold up the calls queued behind it longer
// than their callers wait), and at the latest deadline among them (timeout
// from now for a caller without one).
func batchContext(parent context.Context, timeout time.Duration, calls []*PendingCall) (context.Context, context.CancelFunc) {
	var deadline time.Time
	for _, pc := range calls {
		dl, ok := pc.ctx.Deadline()
		if !ok {
			dl = time.Now().Add(timeout)
		}
		if dl.After(deadline) {
			deadline = dl
		}
	}
	ctx, cancel := context.WithDeadline(parent, deadline)
	var left atomic.Int64
	left.Store(int64(len(calls)))
	stops := make([]func() bool, len(calls))
	for i, pc := range calls {
		stops[i] = context.AfterFunc(pc.ctx, func() {
			if left.Add(-1) == 0 {
				cancel()
			}
		})
	}
	return ctx, func() {
		for _, stop := range stops {
			stop()
		}
		cancel()
	}
}

// poll fetches the answer of a call that outlasted its batch.
func (pr *Protocol) poll(addr, method string, ticket uint64, pc *PendingCall) {
	resp, err := pr.Call(pc.ctx, addr, mBatchPoll, Encode(pollReq{Ticket: ticket}))
	var ans pollAns
	if err == nil {
		err = Decode(resp, &ans)
	}
	switch {
	case err != nil:
		pc.done <- Answer{Err: err}
	case ans.Lost:
		pc.done <- Answer{Err: fmt.Errorf("%w: the answer of a %s call to %s was lost (its outcome is unknown)", ErrUnreachable, method, addr)}
	case ans.Error != "":
		pc.done <- Answer{Err: &RemoteError{Addr: addr, Method: method, Message: ans.Error}}
	default:
		pc.done <- Answer{Body: ans.Item}
	}
}

// onBatch runs a batch's calls concurrently and answers each: once all
// finished, or batchHold after the batch came, or, once one finished, as
// long again as that took (at least batchHold/10); the calls still running
// then are answered with a ticket to poll.
func (pr *Protocol) onBatch(ctx context.Context, from string, req *batchReq) batchAns {
	start := time.Now()
	n := len(req.Items)
	// The calls may outlive this answer: they run under the member's
	// context with the caller's deadline, not under the handler's.
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = start.Add(pr.timeout)
	}
	ictx, cancel := context.WithDeadline(pr.ctx, deadline)
	var left atomic.Int64
	left.Store(int64(n))
	items := make([]*batchItem, n)
	fin := make(chan struct{}, n)
	finish := func(it *batchItem, b []byte, err error) {
		it.b, it.err, it.finished = b, err, time.Now()
		close(it.done)
		fin <- struct{}{}
		if left.Add(-1) <= 0 {
			cancel() // the last call finished
		}
	}
	if n == 0 {
		cancel()
	}
	for i, body := range req.Items {
		it := &batchItem{done: make(chan struct{})}
		items[i] = it
		if !pr.Go(func() {
			b, err := pr.dispatch(ictx, from, req.Method, body)
			finish(it, b, err)
		}) {
			finish(it, nil, pr.closed)
		}
	}
	hold := time.NewTimer(batchHold)
	defer hold.Stop()
	got := 0
wait:
	for got < n {
		select {
		case <-fin:
			got++
			if got == 1 {
				hold.Reset(max(batchHold/10, time.Since(start)))
			}
		case <-hold.C:
			break wait
		case <-ctx.Done():
			break wait
		}
	}
	ans := batchAns{Items: make([][]byte, n), Errors: make([]string, n)}
	for i, it := range items {
		select {
		case <-it.done:
			if it.err != nil {
				ans.Errors[i] = it.err.Error()
			} else {
				ans.Items[i] = it.b
			}
		default:
			if ans.Tickets == nil {
				ans.Tickets = make([]uint64, n)
			}
			ans.Tickets[i] = pr.strag.add(it, pr.timeout)
		}
	}
	return ans
}

// add keeps a running call for a poll and returns its ticket. Calls
// finished over keep ago and never polled are forgotten.
func (s *stragglers) add(it *batchItem, keep time.Duration) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[uint64]*batchItem{}
	}
	for t, x := range s.items {
		select {
		case <-x.done:
			if time.Since(x.finished) > keep {
				delete(s.items, t)
			}
		default:
		}
	}
	s.next++
	s.items[s.next] = it
	return s.next
}

// onPoll answers a poll once its call finished, or says the ticket is
// unknown.
func (pr *Protocol) onPoll(ctx context.Context, req *pollReq) pollAns {
	pr.strag.mu.Lock()
	it := pr.strag.items[req.Ticket]
	pr.strag.mu.Unlock()
	if it == nil {
		return pollAns{Lost: true}
	}
	select {
	case <-it.done:
	case <-ctx.Done():
		return pollAns{Error: ctx.Err().Error()}
	}
	pr.strag.mu.Lock()
	delete(pr.strag.items, req.Ticket)
	pr.strag.mu.Unlock()
	if it.err != nil {
		return pollAns{Error: it.err.Error()}
	}
	return pollAns{Item: it.b}
}

// Done returns the channel the call's answer arrives on, once.
func (pc *PendingCall) Done() <-chan Answer { return pc.done }
