package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The caller's end of a pipe (tcp_pipe_frame.go).

// pipe is the caller's pipe to one member.
type pipe struct {
	t    *TCPTransport
	addr string
	st   net.Conn // a direct connection, or a session's stream
	w    *frameWriter
	quit chan struct{} // closed once the pipe broke

	// sweep runs sweepCalls every pipeSweep while calls that can end
	// wait: those whose context ended are abandoned.
	sweep *time.Timer

	mu       sync.Mutex
	next     uint64
	calls    map[uint64]*pipeCall
	sweeping bool  // sweep is armed
	err      error // why the pipe broke
}

// pipeSweep is how often a pipe looks for calls whose context ended
// while it has any: such a call's callee is told to stop, and its done
// gets the context's error, within that time. (The callers of
// CallAsync watch their context themselves and do not wait for it; one
// sweep per pipe costs less than a watcher per call.)
const pipeSweep = 20 * time.Millisecond

// pipeCall is a call waiting for its answer on a pipe. Its caller
// provides it (PendingCall has one inside), so that a call allocates no
// record of its own here.
type pipeCall struct {
	ctx    context.Context
	method string
	gen    uint64 // the writer's generation the request went into
	to     answerer
}

// answerer receives the outcome of a pipe call, once; it must not block.
type answerer interface {
	answered(body []byte, err error)
}

// answerFunc is a function as an answerer.
type answerFunc func([]byte, error)

func (f answerFunc) answered(b []byte, err error) { f(b, err) }

// deliver hands the call its outcome.
func (c *pipeCall) deliver(b []byte, err error) { c.to.answered(b, err) }

// CallAsync is Call without waiting: the request is queued on the pipe
// to addr (one stream shared by every call to that member; a request over
// 64 KiB goes on a stream of its own) and done is called once with the
// answer or the error, as Call would return them. done must not block: it
// may run on the pipe's reader. Several calls queued at once go in one
// write; a call alone goes at once. When ctx ends first, done gets its
// error within pipeSweep; a caller that must know sooner watches ctx.
func (t *TCPTransport) CallAsync(ctx context.Context, addr, method string, body []byte, done func([]byte, error)) {
	t.callAsync(ctx, addr, method, nil, body, &pipeCall{to: answerFunc(done)})
}

// callAsync is CallAsync of a request of head and body, which it joins
// as it copies them into the pipe; c, whose to is set, receives the
// outcome.
func (t *TCPTransport) callAsync(ctx context.Context, addr, method string, head, body []byte, c *pipeCall) {
	if err := ctx.Err(); err != nil {
		c.deliver(nil, err)
		return
	}
	if len(head)+len(body) > pipeMaxBody || len(method) > 255 {
		whole := body
		if len(head) > 0 {
			whole = append(head[:len(head):len(head)], body...)
		}
		if !t.goTracked(func() { c.deliver(t.Call(ctx, addr, method, whole)) }) {
			c.deliver(nil, unreachable(addr, errTransportClosed))
		}
		return
	}
	p, err := t.pipeTo(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			err = callErr(method, addr, ctx.Err())
		}
		c.deliver(nil, err)
		return
	}
	p.start(ctx, method, head, body, c)
}

// goTracked runs fn on a goroutine that Close waits for; false once the
// transport closed.
func (t *TCPTransport) goTracked(fn func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		fn()
	}()
	return true
}

// pipeTo returns the live pipe to addr, opening one (and dialling) if
// there is none.
func (t *TCPTransport) pipeTo(ctx context.Context, addr string) (*pipe, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, unreachable(addr, errTransportClosed)
	}
	pr := t.peers[addr]
	if pr == nil {
		pr = &peer{dial: make(chan struct{}, 1), pipeOpen: make(chan struct{}, 1)}
		t.peers[addr] = pr
	}
	t.mu.Unlock()
	if p := pr.pipe.Load(); p != nil && p.live() {
		return p, nil
	}
	select {
	case pr.pipeOpen <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-pr.pipeOpen }()
	if p := pr.pipe.Load(); p != nil && p.live() {
		return p, nil // opened by another caller meanwhile
	}
	// The session first: it dials the peer (or finds it unreachable) and
	// is the direct pipe's liveness.
	sess, err := t.session(ctx, addr, pr)
	if err != nil {
		return nil, err
	}
	var st net.Conn
	direct := !t.directOff
	if direct {
		if st, err = t.dialDirect(ctx, addr); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			t.log.Debug("pipe on a session stream", "addr", addr, "err", err)
			direct = false
		}
	}
	if !direct {
		if st, err = t.openStream(ctx, addr); err != nil {
			return nil, err
		}
	}
	open := frameHeader{Method: pipeMethod, From: t.addr}
	if _, _, err := writeFrame(st, &open, nil); err != nil {
		st.Close()
		return nil, unreachable(addr, err)
	}
	p := &pipe{t: t, addr: addr, st: st, w: newFrameWriter(), quit: make(chan struct{}), calls: map[uint64]*pipeCall{}}
	p.sweep = time.AfterFunc(time.Hour, p.sweepCalls)
	p.sweep.Stop()
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		st.Close()
		return nil, unreachable(addr, errTransportClosed)
	}
	t.wg.Add(2)
	t.mu.Unlock()
	go p.readLoop()
	go p.writeLoop()
	if direct {
		t.count.direct.Add(1)
		t.tieToSession(p, sess)
	}
	pr.pipe.Store(p)
	return p, nil
}

func (p *pipe) live() bool {
	select {
	case <-p.quit:
		return false
	default:
		return true
	}
}

// start queues call c.
func (p *pipe) start(ctx context.Context, method string, head, body []byte, c *pipeCall) {
	var deadline int64
	if dl, ok := ctx.Deadline(); ok {
		deadline = dl.UnixNano()
	}
	c.ctx, c.method = ctx, method
	p.mu.Lock()
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		c.deliver(nil, unreachable(p.addr, err))
		return
	}
	p.next++
	id := p.next
	p.calls[id] = c
	if ctx.Done() != nil && !p.sweeping {
		p.sweeping = true
		p.sweep.Reset(pipeSweep)
	}
	p.mu.Unlock()
	gen, err := p.w.queue(ctx.Done(), pipeOut{kind: pipeRequest, id: id, deadline: deadline, method: method, head: head, body: body})
	if err != nil {
		if p.remove(id) != nil {
			if ctx.Err() != nil {
				c.deliver(nil, callErr(method, p.addr, ctx.Err()))
			} else {
				c.deliver(nil, unreachable(p.addr, err))
			}
		}
		return
	}
	p.mu.Lock()
	if p.calls[id] == c {
		c.gen = gen // read by broke once the call is off the map
	}
	p.mu.Unlock()
}

// sweepCalls abandons the calls whose context ended, and arms the next
// sweep while calls wait.
func (p *pipe) sweepCalls() {
	t := p.t
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1) // Close waits for the sweep
	t.mu.Unlock()
	defer t.wg.Done()
	var ended []uint64
	p.mu.Lock()
	for id, c := range p.calls {
		if c.ctx.Err() != nil {
			ended = append(ended, id)
		}
	}
	p.sweeping = p.err == nil && len(p.calls) > len(ended)
	if p.sweeping {
		p.sweep.Reset(pipeSweep)
	}
	p.mu.Unlock()
	for _, id := range ended {
		p.abandon(id)
	}
}

// closedChan is a closed channel: a wait on it gives up at once.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// remove takes call id off the pipe; nil if it was answered or failed
// already.
func (p *pipe) remove(id uint64) *pipeCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls[id]
	delete(p.calls, id)
	return c
}

// abandon ends a call whose context ended: the caller gets the context's
// error and the callee is told to stop.
func (p *pipe) abandon(id uint64) {
	c := p.remove(id)
	if c == nil {
		return
	}
	c.deliver(nil, callErr(c.method, p.addr, c.ctx.Err()))
	p.queueCancel(id)
}

// queueCancel tells the callee to stop call id. Best effort: while the
// pipe is full, the callee's handler ends by the call's deadline instead.
func (p *pipe) queueCancel(id uint64) {
	_, _ = p.w.queue(closedChan, pipeOut{kind: pipeCancel, id: id})
}

// answer delivers the answer of call id.
func (p *pipe) answer(id uint64, status uint8, body []byte, err error) {
	c := p.remove(id)
	if c == nil {
		return // the caller gave up
	}
	if cerr := c.ctx.Err(); cerr != nil {
		// The caller gave up before the answer came (the sweep had not
		// got to it yet): as if the sweep had.
		c.deliver(nil, callErr(c.method, p.addr, cerr))
		return
	}
	switch {
	case err != nil:
		c.deliver(nil, callErr(c.method, p.addr, err))
	case status == statusOK:
		c.deliver(body, nil)
	case status == statusError:
		c.deliver(nil, &RemoteError{Addr: p.addr, Method: c.method, Message: string(body)})
	case status == statusTooLarge:
		c.deliver(nil, callErr(c.method, p.addr, fmt.Errorf("%w: the answer is over the callee's limit", ErrTooLarge)))
	default:
		c.deliver(nil, callErr(c.method, p.addr, fmt.Errorf("unknown answer status %d", status)))
	}
}

// broke fails every call waiting on the pipe: as unreachable those whose
// request was never handed to a write, as of unknown outcome the others.
func (p *pipe) broke(err error) {
	p.w.fail(err)
	p.mu.Lock()
	if p.err == nil {
		p.err = err
		close(p.quit)
	}
	calls := p.calls
	p.calls = map[uint64]*pipeCall{}
	p.sweep.Stop()
	p.mu.Unlock()
	p.st.SetDeadline(longAgo) // the reader stops too
	p.st.Close()
	for _, c := range calls {
		if !p.w.taken(c.gen) {
			c.deliver(nil, unreachable(p.addr, err))
		} else {
			c.deliver(nil, callErr(c.method, p.addr, fmt.Errorf("connection lost awaiting the answer: %w", err)))
		}
	}
}

func (p *pipe) writeLoop() {
	defer p.t.wg.Done()
	if err := p.w.loop(p.st, p.t.opts.ConnectionWriteTimeout, p.quit, func(n int) { p.t.count.frames.Add(uint64(n)) }); err != nil {
		p.broke(err)
	}
}

// readLoop reads answers until the pipe breaks.
func (p *pipe) readLoop() {
	defer p.t.wg.Done()
	r := bufio.NewReaderSize(p.st, 16<<10)
	var hdr [pipeHeaderSize]byte
	limit := p.t.opts.maxMessage
	for {
		f, err := readPipeFrame(r, &hdr)
		if err == nil && (f.kind != pipeAnswer || f.plen < 1) {
			err = fmt.Errorf("%w: kind %d on the caller's side", errBadPipeFrame, f.kind)
		}
		if err != nil {
			p.broke(noEOF(err))
			return
		}
		status, err := r.ReadByte()
		if err != nil {
			p.broke(noEOF(err))
			return
		}
		n := int64(f.plen) - 1
		if n > int64(limit) {
			// Over this member's limit: skipped, the pipe stays usable.
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				p.broke(noEOF(err))
				return
			}
			p.answer(f.id, 0, nil, &errFrameTooLarge{"message", n, int64(limit)})
			continue
		}
		body, err := readSized(r, int(n))
		if err != nil {
			p.broke(noEOF(err))
			return
		}
		p.answer(f.id, status, body, nil)
	}
}
