package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"time"

	"github.com/hashicorp/yamux"
)

// The serving side of the TCP transport.

// acceptLoop accepts connections until the listener closes.
func (t *TCPTransport) acceptLoop() {
	defer t.wg.Done()
	var backoff time.Duration
	for {
		conn, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			t.log.Warn("accept failed", "err", err, "retry_in", backoff)
			timer := time.NewTimer(backoff)
			select {
			case <-timer.C:
			case <-t.ctx.Done():
				timer.Stop()
				return
			}
			continue
		}
		backoff = 0
		conn = countedConn{conn, &t.count.writes}
		// The first byte (a session or a direct pipe, route) is read on a
		// goroutine of its own, within HandshakeTimeout. With Security the
		// TLS handshake comes first, bounded in time, and only so many
		// handshakes at once: a peer that connects and says nothing holds
		// a slot for at most twice HandshakeTimeout.
		if t.tls != nil {
			select {
			case t.hsSlots <- struct{}{}:
			default:
				t.refusedBusy.warn("too many connections awaiting authentication; closing one", "remote", conn.RemoteAddr().String())
				conn.Close()
				continue
			}
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			var leaf *x509.Certificate
			if t.tls != nil {
				defer func() { <-t.hsSlots }()
				if leaf, conn = t.handshake(conn); conn == nil {
					return
				}
			}
			direct, sess, ok := t.route(conn)
			switch {
			case !ok:
			case direct != nil:
				t.serveDirect(direct, leaf)
			default:
				t.startSession(sess, leaf)
			}
		}()
	}
}

// handshake authenticates an incoming connection; nil when it fails.
func (t *TCPTransport) handshake(conn net.Conn) (*x509.Certificate, net.Conn) {
	tc := tls.Server(conn, t.tls.serverConfig())
	ctx, cancel := context.WithTimeout(t.ctx, t.opts.HandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		var rh tls.RecordHeaderError
		switch {
		case t.ctx.Err() != nil:
		case errors.As(err, &rh):
			// Not TLS at all: a member without hazelcast.network.ssl, or
			// a stranger. Members with and without it do not talk.
			t.refusedPeer.warn("member connection refused: the peer does not speak TLS; every member needs hazelcast.network.ssl with the same credentials (it cannot be turned on one member at a time)",
				"remote", conn.RemoteAddr().String())
		default:
			t.refusedPeer.warn("member connection refused: authentication failed", "remote", conn.RemoteAddr().String(), "err", err)
		}
		conn.Close()
		return nil, nil
	}
	return tc.ConnectionState().PeerCertificates[0], tc
}

// startSession serves the calls of one incoming connection; leaf is the
// peer's certificate when the connection is authenticated.
func (t *TCPTransport) startSession(conn net.Conn, leaf *x509.Certificate) {
	sess, err := yamux.Server(&joinedConn{Conn: conn}, t.ymx)
	if err != nil { // only on a bad config, checked in ListenTCP
		conn.Close()
		return
	}
	if !t.track(sess, conn.RemoteAddr()) {
		return
	}
	t.log.Debug("connection accepted", "remote", conn.RemoteAddr().String())
	go t.serveSession(sess, leaf)
}

// track counts an incoming connection (a session or a direct pipe) among
// those Close closes, and one goroutine more that serves it, which must
// end with untrack; if the transport is closed, or already serves
// MaxConnections, it closes c instead and returns false.
func (t *TCPTransport) track(c io.Closer, remote net.Addr) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		c.Close()
		return false
	}
	if len(t.inbound) >= t.opts.MaxConnections {
		t.refusedBusy.warn("member connection refused: too many incoming connections", "remote", remote.String(), "max", t.opts.MaxConnections)
		c.Close()
		return false
	}
	t.inbound[c] = struct{}{}
	t.wg.Add(1)
	return true
}

// untrack closes an incoming connection track counted and forgets it.
func (t *TCPTransport) untrack(c io.Closer) {
	c.Close()
	t.mu.Lock()
	delete(t.inbound, c)
	t.mu.Unlock()
}

// serveSession accepts the streams of one incoming connection until it
// closes, serving at most MaxStreams calls at once: a further stream
// waits for a slot, the ones after it in yamux's backlog, and the
// caller's OpenStream waits once that is full.
func (t *TCPTransport) serveSession(sess *yamux.Session, leaf *x509.Certificate) {
	defer t.wg.Done()
	defer t.untrack(sess)
	slots := make(chan struct{}, t.opts.MaxStreams)
	for {
		st, err := sess.AcceptStream()
		if err != nil {
			if t.ctx.Err() == nil {
				t.log.Debug("connection closed", "remote", sess.RemoteAddr().String(), "err", err)
			}
			return
		}
		// A slot is taken once the stream is accepted: the pipe gives its
		// own back at once, and its calls take theirs as they come.
		select {
		case slots <- struct{}{}:
		case <-sess.CloseChan():
			st.Close()
			return
		case <-t.ctx.Done():
			st.Close()
			return
		}
		t.wg.Add(1)
		go t.serveStream(sess, st, leaf, slots)
	}
}

// serveStream serves one call: it reads the request, runs the handler and
// writes the answer. It holds one of slots, taken for it, until it
// returns, unless the stream is a pipe, which serves many calls, each
// holding a slot while its handler runs.
func (t *TCPTransport) serveStream(sess *yamux.Session, st *yamux.Stream, leaf *x509.Certificate, slots chan struct{}) {
	defer t.wg.Done()
	defer st.Close()
	held := true
	defer func() {
		if held {
			<-slots
		}
	}()
	var req frameHeader
	if err := readHeader(st, &req); err != nil {
		t.refuse(sess, err)
		return
	}
	if req.Method == pipeMethod {
		if _, err := readBody(st, 0); err != nil {
			t.refuse(sess, err)
			return
		}
		<-slots
		held = false
		t.servePipe(sess, st, leaf, req.From, slots)
		return
	}
	if req.Deadline != 0 {
		st.SetReadDeadline(timeFromNanos(req.Deadline))
	}
	body, err := readBody(st, t.opts.maxMessage)
	if err != nil {
		t.refuse(sess, err)
		return
	}

	ctx, cancel := callContext(t.ctx, req.Deadline)
	defer cancel()
	if req.Deadline != 0 {
		// Set before the watcher starts, so that its abort wins.
		st.SetWriteDeadline(timeFromNanos(req.Deadline))
	}
	// The caller sends nothing after the request: a read returns only
	// when the caller closes its end (it has the answer or gave up) or the
	// connection breaks, and either way the call is over. A caller that
	// gave up at its deadline leaves the context to end by that deadline,
	// so that the handler sees DeadlineExceeded rather than Canceled.
	st.SetReadDeadline(time.Time{})
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		var b [1]byte
		st.Read(b[:])
		if req.Deadline == 0 || time.Now().UnixNano() < req.Deadline {
			cancel()
		}
		st.SetWriteDeadline(longAgo)
	}()

	from := t.callerAddr(leaf, req.From)
	var ans frameHeader
	var out []byte
	ans.Status, out = t.handle(ctx, from, req.Method, body)
	t.count.frames.Add(1)
	if _, _, err := writeFrame(st, &ans, out); err != nil && ctx.Err() == nil {
		t.log.Debug("answer not sent", "method", req.Method, "from", from, "err", err)
	}
}

// callerAddr is the caller's address: the one it states, or with
// Security the one its certificate proves ("" when it proves none).
func (t *TCPTransport) callerAddr(leaf *x509.Certificate, stated string) string {
	if t.tls != nil {
		// The caller is who its certificate says, not what it wrote.
		return t.tls.peerAddr(leaf, stated)
	}
	return stated
}

// handle runs the handler on one request and returns the answer's
// status and body.
func (t *TCPTransport) handle(ctx context.Context, from, method string, body []byte) (uint8, []byte) {
	hp := t.handler.Load()
	switch {
	case from == "" && t.tls != nil:
		return statusError, []byte(ErrNotMember.Error())
	case hp == nil:
		return statusError, []byte(ErrNoHandler.Error())
	}
	res, err := (*hp)(ctx, from, method, body)
	switch {
	case err != nil:
		return statusError, []byte(err.Error())
	case len(res) > t.opts.maxMessage:
		t.log.Warn("answer too large", "method", method, "from", from, "size", len(res), "limit", t.opts.maxMessage)
		return statusTooLarge, nil
	}
	return statusOK, res
}

// refuse handles a request that could not be read. One over the limit
// is a protocol violation: the connection is closed, which also stops the
// rest of the oversized request from being sent.
func (t *TCPTransport) refuse(sess peerConn, err error) {
	if errors.Is(err, ErrTooLarge) {
		t.refusedPeer.warn("request refused; closing the connection", "remote", sess.RemoteAddr().String(), "err", err)
		sess.Close()
		return
	}
	if t.ctx.Err() == nil {
		t.log.Debug("request not read", "remote", sess.RemoteAddr().String(), "err", err)
	}
}
