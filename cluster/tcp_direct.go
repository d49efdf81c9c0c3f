package cluster

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// A pipe (tcp_pipe_frame.go) has a TCP connection of its own, beside the
// peer's multiplexed session: its frames then go straight to the socket,
// without the session's send and receive goroutines and copies in
// between. The connection is authenticated like the session's (TLS with
// Security), then opened with directPreamble; the callee answers
// directAck. A callee that does not know it takes the preamble for a
// session's first frame and closes the connection, and the caller falls
// back to a pipe on a session stream. The session stays the peer's
// liveness: its keep-alive finds a dead peer, and when it closes (Drop,
// keep-alive, Close) the direct pipe is broken with it.

// directPreamble opens a direct pipe connection. Its first byte is not
// 0, the version byte that begins every frame of a session, and it is as
// long as a session's frame header, so that a member that takes it for
// one reads all of it and refuses it at once.
var directPreamble = [yamuxHeaderSize]byte{'S', 'T', 'O', 'W', 'A', 'G', 'E', '-', 'P', 'I', 'P', 'E'}

// directAck is the callee's answer to directPreamble.
const directAck = 'K'

// errSessionClosed breaks a direct pipe whose peer's session closed.
var errSessionClosed = errors.New("the connection to the member closed")

// dialDirect connects a direct pipe connection to addr; an error means
// there is none (the caller falls back to a session stream).
func (t *TCPTransport) dialDirect(ctx context.Context, addr string) (net.Conn, error) {
	conn, err := t.dialConn(ctx, addr)
	if err != nil {
		return nil, err
	}
	// The acknowledgement comes within HandshakeTimeout, and the wait
	// ends with ctx or the transport.
	deadline := time.Now().Add(t.opts.HandshakeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	abort := func() { conn.SetDeadline(longAgo) }
	stopCtx, stopT := context.AfterFunc(ctx, abort), context.AfterFunc(t.ctx, abort)
	var ack [1]byte
	if _, err = conn.Write(directPreamble[:]); err == nil {
		_, err = io.ReadFull(conn, ack[:])
	}
	// Both stop: neither abort ran, so the deadline is still ours.
	ctxStopped, tStopped := stopCtx(), stopT()
	switch {
	case err != nil:
	case ack[0] != directAck:
		err = fmt.Errorf("answered %q", ack[0])
	case !ctxStopped || !tStopped:
		err = errors.New("cut off")
	}
	if err != nil {
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("direct pipe to %s: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// peerConn is the connection a served call came on: a session, or a
// direct pipe connection. A protocol violation closes all of it.
type peerConn interface {
	RemoteAddr() net.Addr
	Close() error
	CloseChan() <-chan struct{}
}

// directConn is a direct pipe connection on the callee's side.
type directConn struct {
	net.Conn
	once sync.Once
	done chan struct{}
}

func (c *directConn) Close() error {
	c.once.Do(func() { close(c.done) })
	return c.Conn.Close()
}

func (c *directConn) CloseChan() <-chan struct{} { return c.done }

// prefixedConn is a connection whose first bytes were read already:
// Read returns them before the rest.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// route reads the first byte of an authenticated incoming connection,
// within HandshakeTimeout: a direct pipe's preamble, or a session's first
// frame (served as a session, the byte given back). It returns nil for
// a session, else the direct pipe connection, answered, for servePipe.
// A connection that says nothing in time, or an unknown preamble, is
// closed (ok false).
func (t *TCPTransport) route(conn net.Conn) (direct *directConn, session net.Conn, ok bool) {
	conn.SetReadDeadline(time.Now().Add(t.opts.HandshakeTimeout))
	var first [1]byte
	if _, err := io.ReadFull(conn, first[:]); err != nil {
		conn.Close()
		return nil, nil, false
	}
	if first[0] != directPreamble[0] || t.directOff {
		conn.SetReadDeadline(time.Time{})
		return nil, &prefixedConn{Conn: conn, prefix: first[:]}, true
	}
	var rest [len(directPreamble) - 1]byte
	if _, err := io.ReadFull(conn, rest[:]); err != nil || [len(rest)]byte(directPreamble[1:]) != rest {
		t.refusedPeer.warn("member connection refused: an unknown preamble", "remote", conn.RemoteAddr().String())
		conn.Close()
		return nil, nil, false
	}
	conn.SetReadDeadline(time.Time{})
	return &directConn{Conn: conn, done: make(chan struct{})}, nil, true
}

// serveDirect serves a direct pipe connection: it is counted among the
// incoming connections, and only then is the preamble answered, so that a
// dialer past MaxConnections sees the connection closed without an
// answer. Its first frame opens the pipe, as on a session stream, and
// servePipe serves it until it ends.
func (t *TCPTransport) serveDirect(dc *directConn, leaf *x509.Certificate) {
	if !t.track(dc, dc.RemoteAddr()) {
		return
	}
	go func() {
		defer t.wg.Done()
		defer t.untrack(dc)
		dc.SetWriteDeadline(time.Now().Add(t.opts.HandshakeTimeout))
		if _, err := dc.Write([]byte{directAck}); err != nil {
			return
		}
		dc.SetWriteDeadline(time.Time{})
		var req frameHeader
		if err := readHeader(dc, &req); err != nil {
			t.refuse(dc, err)
			return
		}
		if req.Method != pipeMethod {
			t.refusedPeer.warn("member connection refused: a direct connection that opens no pipe", "remote", dc.RemoteAddr().String())
			return
		}
		if _, err := readBody(dc, 0); err != nil {
			t.refuse(dc, err)
			return
		}
		t.servePipe(dc, dc, leaf, req.From, make(chan struct{}, t.opts.MaxStreams))
	}()
}

// tieToSession breaks p when sess closes (Drop, keep-alive, Close): the
// session is the peer's liveness for a direct pipe.
func (t *TCPTransport) tieToSession(p *pipe, sess interface{ CloseChan() <-chan struct{} }) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		select {
		case <-sess.CloseChan():
			p.broke(errSessionClosed)
		case <-t.ctx.Done():
			p.broke(errTransportClosed)
		case <-p.quit:
		}
	}()
}
