package cluster

import (
	"bufio"
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The callee's end of a pipe (tcp_pipe_frame.go).

// servedCall is a call of a pipe whose handler runs.
type servedCall struct {
	ctx *servedCtx
}

// pipeServer serves the calls of one pipe.
type pipeServer struct {
	t    *TCPTransport
	st   net.Conn
	from string // the caller, from the connection
	w    *frameWriter
	quit chan struct{} // closed when the pipe ends

	// sweep runs sweepCalls every pipeSweep while handlers with a
	// deadline run: those past it have their context ended.
	sweep *time.Timer

	mu       sync.Mutex
	running  map[uint64]servedCall
	sweeping bool // sweep is armed
	closed   bool // the pipe ended: nothing more is swept
}

// servePipe reads the calls of a pipe until it ends, running each
// handler on its own goroutine while it holds one of slots (the
// connection's; while none is free, the pipe is not read). stated is the
// address the caller gave; with Security the connection's certificate
// decides who the caller is.
func (t *TCPTransport) servePipe(sess peerConn, st net.Conn, leaf *x509.Certificate, stated string, slots chan struct{}) {
	sp := &pipeServer{t: t, st: st, from: t.callerAddr(leaf, stated), w: newFrameWriter(), quit: make(chan struct{}),
		running: map[uint64]servedCall{}}
	sp.sweep = time.AfterFunc(time.Hour, sp.sweepCalls)
	sp.sweep.Stop()
	// The transport closing ends every handler, as the pipe closing does.
	stopClose := context.AfterFunc(t.ctx, sp.endAll)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		if err := sp.w.loop(st, t.opts.ConnectionWriteTimeout, sp.quit, func(n int) { t.count.frames.Add(uint64(n)) }); err != nil {
			st.SetDeadline(longAgo) // the reader stops too
		}
	}()
	defer func() {
		stopClose()
		sp.w.fail(errTransportClosed)
		close(sp.quit)
		// The caller is gone: every handler still running ends.
		sp.endAll()
	}()

	r := bufio.NewReaderSize(st, 16<<10)
	var hdr [pipeHeaderSize]byte
	for {
		f, err := readPipeFrame(r, &hdr)
		if err != nil {
			if t.ctx.Err() == nil && err != io.EOF {
				t.log.Debug("pipe closed", "remote", sess.RemoteAddr().String(), "err", err)
			}
			return
		}
		switch {
		case f.kind == pipeRequest && f.plen > pipeMaxRequest:
			t.refuse(sess, &errFrameTooLarge{"pipe request", int64(f.plen), pipeMaxRequest})
			return
		case f.kind == pipeRequest:
			payload := make([]byte, f.plen)
			if _, err := io.ReadFull(r, payload); err != nil {
				t.refuse(sess, noEOF(err))
				return
			}
			req, err := parsePipeRequest(payload)
			if err != nil {
				t.refuse(sess, err)
				return
			}
			select {
			case slots <- struct{}{}:
			case <-sess.CloseChan():
				return
			case <-t.ctx.Done():
				return
			}
			sp.start(f.id, req, slots)
		case f.kind == pipeCancel && f.plen == 0:
			sp.mu.Lock()
			c, ok := sp.running[f.id]
			sp.mu.Unlock()
			if ok {
				c.end()
			}
		default:
			t.log.Warn("pipe closed: a malformed frame", "remote", sess.RemoteAddr().String(), "kind", f.kind, "len", f.plen)
			sess.Close()
			return
		}
	}
}

// end ends a handler's context because its caller gave up: canceled,
// unless the call's deadline passed, in which case the handler sees
// DeadlineExceeded.
func (c servedCall) end() {
	if c.ctx.expired(time.Now()) {
		c.ctx.end(context.DeadlineExceeded)
	} else {
		c.ctx.end(context.Canceled)
	}
}

// endAll ends every running handler's context, and the sweeps.
func (sp *pipeServer) endAll() {
	sp.mu.Lock()
	sp.closed = true
	sp.sweep.Stop()
	running := make([]servedCall, 0, len(sp.running))
	for _, c := range sp.running {
		running = append(running, c)
	}
	sp.mu.Unlock()
	for _, c := range running {
		c.end()
	}
}

// sweepCalls ends the contexts of the handlers past their deadline, and
// arms the next sweep while handlers with a deadline run.
func (sp *pipeServer) sweepCalls() {
	t := sp.t
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.wg.Add(1) // Close waits for the sweep
	t.mu.Unlock()
	defer t.wg.Done()
	now := time.Now()
	var expired []*servedCtx
	sp.mu.Lock()
	waiting := false
	for _, c := range sp.running {
		switch {
		case c.ctx.expired(now):
			expired = append(expired, c.ctx)
		case !c.ctx.deadline.IsZero():
			waiting = true
		}
	}
	sp.sweeping = waiting && !sp.closed
	if sp.sweeping {
		sp.sweep.Reset(pipeSweep)
	}
	sp.mu.Unlock()
	for _, ctx := range expired {
		ctx.end(context.DeadlineExceeded)
	}
}

// servedTask is a request of a pipe whose handler is to run, with its
// context: one allocation per call.
type servedTask struct {
	ctx   servedCtx
	sp    *pipeServer
	id    uint64
	req   pipeReq
	slots chan struct{}
}

// start runs the handler of one request and queues its answer; slots
// holds a token for it, given back when it is done.
func (sp *pipeServer) start(id uint64, req pipeReq, slots chan struct{}) {
	task := &servedTask{sp: sp, id: id, req: req, slots: slots}
	ctx := &task.ctx
	ctx.init(req.deadline)
	if ctx.expired(time.Now()) {
		ctx.end(context.DeadlineExceeded)
	}
	sp.mu.Lock()
	sp.running[id] = servedCall{ctx: ctx}
	if req.deadline != 0 && !sp.sweeping && !sp.closed {
		sp.sweeping = true
		sp.sweep.Reset(pipeSweep)
	}
	sp.mu.Unlock()
	sp.t.runTask(task)
}

// run runs the handler and queues its answer.
func (task *servedTask) run() {
	sp, id, req, ctx := task.sp, task.id, task.req, &task.ctx
	t := sp.t
	defer func() { <-task.slots }()
	defer ctx.end(context.Canceled)
	status, out := t.handle(ctx, sp.from, req.method, req.body)
	sp.mu.Lock()
	delete(sp.running, id)
	sp.mu.Unlock()
	if _, err := sp.w.queue(sp.quit, pipeOut{kind: pipeAnswer, id: id, status: status, body: out}); err != nil && ctx.Err() == nil {
		t.log.Debug("answer not sent", "method", req.method, "from", sp.from, "err", fmt.Errorf("pipe: %w", err))
	}
}

// maxIdleWorkers bounds the goroutines kept waiting for the next
// handler to run.
const maxIdleWorkers = 64

// runTask runs task on a goroutine that Close waits for: one that ran a
// handler before and waits for the next, if one does (its stack has
// grown already), else a new one. It is called from a goroutine Close
// waits for.
func (t *TCPTransport) runTask(task *servedTask) {
	select {
	case t.tasks <- task:
		return
	default:
	}
	t.wg.Add(1)
	go t.worker(task)
}

// worker runs task, then the tasks handed to it while it is idle, until
// the transport closes or enough others are idle.
func (t *TCPTransport) worker(task *servedTask) {
	defer t.wg.Done()
	for {
		task.run()
		if t.idle.Add(1) > maxIdleWorkers {
			t.idle.Add(-1)
			return
		}
		select {
		case task = <-t.tasks:
			t.idle.Add(-1)
		case <-t.ctx.Done():
			t.idle.Add(-1)
			return
		}
	}
}
