package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/hashicorp/yamux"
)

// peer is the outgoing connection to one address.
type peer struct {
	sess     atomic.Pointer[yamux.Session] // nil until dialled
	dial     chan struct{}                 // holds a token while dialling
	pipe     atomic.Pointer[pipe]          // nil until the first CallAsync
	pipeOpen chan struct{}                 // holds a token while opening the pipe
}

var errTransportClosed = errors.New("transport closed")

// longAgo is a deadline in the past: set on a stream, it aborts the
// reads and writes blocked on it.
var longAgo = time.Unix(1, 0)

// Call implements Transport.
//
// Errors: ErrUnreachable when the connection could not be made or broke
// before the request was wholly sent; the caller's context error when ctx
// ends first (never ErrUnreachable, even if nothing was sent: the member
// was not found unreachable); ErrTooLarge for a request or answer over
// MaxMessageSize (a request is refused before anything is sent); a
// *RemoteError for the handler's error; any other error when the
// connection broke once the request was sent, leaving the outcome
// unknown.
func (t *TCPTransport) Call(ctx context.Context, addr, method string, body []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(body) > t.opts.maxMessage {
		return nil, callErr(method, addr, &errFrameTooLarge{"request", int64(len(body)), int64(t.opts.maxMessage)})
	}
	st, err := t.openStream(ctx, addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, callErr(method, addr, ctx.Err())
		}
		return nil, err
	}
	defer st.Close()

	var deadline int64
	if dl, ok := ctx.Deadline(); ok {
		deadline = dl.UnixNano()
		st.SetDeadline(dl)
	}
	// A context that is cancelled rather than timed out aborts the
	// stream's reads and writes the same way.
	defer afterFunc(ctx, func() { st.SetDeadline(longAgo) })()

	req := frameHeader{Method: method, From: t.addr, Deadline: deadline}
	t.count.frames.Add(1)
	sent, total, err := writeFrame(st, &req, body)
	if err != nil {
		return nil, t.sendFailed(ctx, addr, method, total-sent, err)
	}
	var ans frameHeader
	err = readHeader(st, &ans)
	var out []byte
	if err == nil {
		out, err = readBody(st, t.opts.maxMessage)
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, yamux.ErrTimeout) {
			return nil, ctxErr(ctx, method, addr)
		}
		if errors.Is(err, ErrTooLarge) {
			return nil, callErr(method, addr, err)
		}
		return nil, callErr(method, addr, fmt.Errorf("connection lost awaiting the answer: %w", err))
	}
	switch ans.Status {
	case statusOK:
		return out, nil
	case statusError:
		return nil, &RemoteError{Addr: addr, Method: method, Message: string(out)}
	case statusTooLarge:
		return nil, callErr(method, addr, fmt.Errorf("%w: the answer is over the callee's limit", ErrTooLarge))
	default:
		return nil, callErr(method, addr, fmt.Errorf("unknown answer status %d", ans.Status))
	}
}

// sendFailed classifies a failed write of the request, unsent bytes
// short of the whole frame. The callee runs the handler only on a whole
// request, so the request was certainly not handled if the failed write
// was refused before anything was queued, or if more than one stream
// window was left (one queued write carries at most that much, so the
// last byte cannot have gone out). Otherwise it may have been.
func (t *TCPTransport) sendFailed(ctx context.Context, addr, method string, unsent int, err error) error {
	if ctx.Err() != nil || errors.Is(err, yamux.ErrTimeout) {
		return ctxErr(ctx, method, addr)
	}
	if errors.Is(err, yamux.ErrStreamClosed) || errors.Is(err, yamux.ErrConnectionReset) || unsent > t.opts.StreamWindow {
		return unreachable(addr, err)
	}
	return callErr(method, addr, fmt.Errorf("connection lost sending the request, which may have been delivered: %w", err))
}

// openStream opens a stream to addr, dialling when there is no live
// connection. A connection that refuses new streams (closed, or out of
// stream ids) is dropped and dialled again once.
func (t *TCPTransport) openStream(ctx context.Context, addr string) (*yamux.Stream, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, unreachable(addr, errTransportClosed)
	}
	p := t.peers[addr]
	if p == nil {
		p = &peer{dial: make(chan struct{}, 1), pipeOpen: make(chan struct{}, 1)}
		t.peers[addr] = p
	}
	t.mu.Unlock()

	var last error
	for range 2 {
		sess, err := t.session(ctx, addr, p)
		if err != nil {
			return nil, err
		}
		st, err := openStream(ctx, sess)
		if err == nil {
			t.count.streams.Add(1)
			return st, nil
		}
		if ctx.Err() != nil {
			return nil, err // the caller gave up; the connection may be fine
		}
		sess.Close()
		p.sess.CompareAndSwap(sess, nil)
		last = err
	}
	return nil, unreachable(addr, last)
}

// session returns p's live connection, dialling addr if there is none.
// Concurrent callers wait for one dial, each within its own ctx.
func (t *TCPTransport) session(ctx context.Context, addr string, p *peer) (*yamux.Session, error) {
	if s := p.sess.Load(); s != nil && !s.IsClosed() {
		return s, nil
	}
	select {
	case p.dial <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-p.dial }()
	if s := p.sess.Load(); s != nil && !s.IsClosed() {
		return s, nil // dialled by another caller meanwhile
	}

	conn, err := t.dialConn(ctx, addr)
	if err != nil {
		return nil, err
	}
	sess, err := yamux.Client(&joinedConn{Conn: conn}, t.ymx)
	if err != nil { // only on a bad config, checked in ListenTCP
		conn.Close()
		return nil, unreachable(addr, err)
	}
	t.mu.Lock()
	closed := t.closed
	if !closed {
		p.sess.Store(sess)
		// The session's first frame, at once: the callee closes a
		// connection that says nothing within HandshakeTimeout (route),
		// and a session whose only user is a direct pipe opens no stream.
		// The answer is not awaited; keep-alive judges the peer.
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			_, _ = sess.Ping()
		}()
	}
	t.mu.Unlock()
	if closed {
		sess.Close()
		return nil, unreachable(addr, errTransportClosed)
	}
	t.log.Debug("connected", "addr", addr)
	return sess, nil
}

// dialConn connects to addr and, with Security, authenticates the
// connection (TLS): what a session and a direct pipe both start with.
func (t *TCPTransport) dialConn(ctx context.Context, addr string) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, t.opts.DialTimeout)
	defer cancel()
	defer afterFunc(t.ctx, cancel)()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", addr)
	if err == nil {
		conn = countedConn{conn, &t.count.writes}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if t.ctx.Err() != nil {
			err = errTransportClosed
		}
		return nil, unreachable(addr, err)
	}
	if t.tls != nil {
		hctx, hcancel := context.WithTimeout(dctx, t.opts.HandshakeTimeout)
		tc := tls.Client(conn, t.tls.clientConfig(addr))
		err := tc.HandshakeContext(hctx)
		hcancel()
		if err != nil {
			conn.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var rh tls.RecordHeaderError
			if errors.As(err, &rh) { // the peer does not speak TLS
				err = fmt.Errorf("%w: %w", ErrAuthFailed, err)
			}
			return nil, unreachable(addr, fmt.Errorf("member TLS handshake: %w", err))
		}
		conn = tc
	}
	return conn, nil
}

func callErr(method, addr string, err error) error {
	return fmt.Errorf("stowage/cluster: %s to %s: %w", method, addr, err)
}

// ctxErr is the error of a call whose context ended. The stream's
// deadline is the context's, so when it fires the context is done or
// about to be.
func ctxErr(ctx context.Context, method, addr string) error {
	<-ctx.Done()
	return callErr(method, addr, ctx.Err())
}

// afterFunc is context.AfterFunc whose stop also waits for f to have
// finished, so that no goroutine it started outlives the caller.
func afterFunc(ctx context.Context, f func()) (stop func()) {
	done := make(chan struct{})
	s := context.AfterFunc(ctx, func() {
		defer close(done)
		f()
	})
	return func() {
		if !s() {
			<-done
		}
	}
}

// openStream is sess.OpenStream bounded by ctx: yamux waits, without a
// context, while too many streams are unacknowledged (a hung peer). A
// stream opened after the caller gave up is closed at once.
func openStream(ctx context.Context, sess *yamux.Session) (*yamux.Stream, error) {
	type opened struct {
		st  *yamux.Stream
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		st, err := sess.OpenStream()
		ch <- opened{st, err}
	}()
	select {
	case o := <-ch:
		return o.st, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.st != nil {
				o.st.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Drop closes the connection to addr, if any: calls in flight to it fail
// at once (their outcome unknown) instead of waiting for their deadline or
// for keepalive to find the peer dead. The next call dials again.
func (t *TCPTransport) Drop(addr string) {
	t.mu.Lock()
	p := t.peers[addr]
	t.mu.Unlock()
	if p == nil {
		return
	}
	if s := p.sess.Swap(nil); s != nil {
		s.Close()
	}
}
