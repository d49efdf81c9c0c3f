package cluster_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// TestPipeOnDirectConnection: a pipe runs on a connection of its own,
// not on a stream of the peer's session, and a second call uses the same
// pipe.
func TestPipeOnDirectConnection(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	b.SetHandler(echo)
	for _, body := range []string{"x", "y"} {
		if got, err := asyncCall(callCtx(t), a, b.Addr(), "m", []byte(body)); err != nil || string(got) != "re:"+body {
			t.Fatalf("call: %q, %v", got, err)
		}
	}
	if s := a.Stats(); s.DirectPipes != 1 || s.Streams != 0 {
		t.Errorf("%d direct pipes and %d session streams opened, want 1 and 0", s.DirectPipes, s.Streams)
	}
}

// TestIdlePipeOutlivesHandshakeTimeout: a pipe and its session left
// idle for longer than the callee's first-bytes timeout stay open: the
// session said its first frame when it was dialled, and the next call
// uses the same pipe.
func TestIdlePipeOutlivesHandshakeTimeout(t *testing.T) {
	opts := quiet
	opts.HandshakeTimeout = 100 * time.Millisecond
	a, b := listenTCP(t, opts), listenTCP(t, opts)
	b.SetHandler(echo)
	for i := range 2 {
		if got, err := asyncCall(callCtx(t), a, b.Addr(), "m", []byte("x")); err != nil || string(got) != "re:x" {
			t.Fatalf("call %d: %q, %v", i, got, err)
		}
		time.Sleep(5 * opts.HandshakeTimeout)
	}
	if n := a.Stats().DirectPipes; n != 1 {
		t.Errorf("%d direct pipes opened for two calls on an idle pipe, want 1", n)
	}
}

// TestPipeFallsBackToSessionStream: a member that does not know direct
// pipes takes the preamble for a session's frame and closes the
// connection; the caller's pipe then runs on a session stream, and calls
// are answered.
func TestPipeFallsBackToSessionStream(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	cluster.SetDirectOff(b)
	b.SetHandler(echo)
	if got, err := asyncCall(callCtx(t), a, b.Addr(), "m", []byte("x")); err != nil || string(got) != "re:x" {
		t.Fatalf("call: %q, %v", got, err)
	}
	if s := a.Stats(); s.DirectPipes != 0 || s.Streams != 1 {
		t.Errorf("%d direct pipes and %d session streams opened, want 0 and 1", s.DirectPipes, s.Streams)
	}
}

// TestDropBreaksDirectPipe: dropping the peer's connection fails a call
// waiting on its direct pipe at once (the session is the pipe's
// liveness), and the next call opens a new pipe.
func TestDropBreaksDirectPipe(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	b.SetHandler(func(ctx context.Context, _, method string, body []byte) ([]byte, error) {
		if method == "hold" {
			arrived <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return body, nil
	})
	res := make(chan error, 1)
	a.CallAsync(callCtx(t), b.Addr(), "hold", nil, func(_ []byte, err error) { res <- err })
	wait(t, arrived, "the call to reach the handler")
	a.Drop(b.Addr())
	if err := wait(t, res, "the call to fail after Drop"); err == nil {
		t.Fatal("a call waiting on a dropped connection succeeded")
	}
	if _, err := asyncCall(callCtx(t), a, b.Addr(), "m", []byte("x")); err != nil {
		t.Fatalf("call after Drop: %v", err)
	}
	if n := a.Stats().DirectPipes; n != 2 {
		t.Errorf("%d direct pipes opened, want 2 (one before Drop, one after)", n)
	}
}

// dialDirect opens a direct pipe connection to tr by hand: the preamble,
// then the callee's acknowledgement.
func dialDirect(t *testing.T, tr *cluster.TCPTransport) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", tr.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte("STOWAGE-PIPE")); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(longStop))
	var ack [1]byte
	if _, err := io.ReadFull(conn, ack[:]); err != nil || ack[0] != 'K' {
		t.Fatalf("acknowledgement %q, %v", ack[:], err)
	}
	return conn
}

// closedByPeer reports whether conn is closed by the other end within
// longStop (a read returns EOF or a reset).
func closedByPeer(conn net.Conn) bool {
	conn.SetReadDeadline(time.Now().Add(longStop))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// TestDirectPipeRequestBoundedBeforeRead: on a direct pipe as on a
// session stream, a frame stating a request larger than a pipe request
// may be closes the connection before the payload is read, and no
// handler runs.
func TestDirectPipeRequestBoundedBeforeRead(t *testing.T) {
	srv := listenTCP(t, quiet)
	served := countServed(srv)
	conn := dialDirect(t, srv)
	_, _ = conn.Write(oversizedPipeRequest())
	if !closedByPeer(conn) {
		t.Fatal("the connection stayed open after an oversized pipe frame")
	}
	if n := served.Load(); n != 0 {
		t.Errorf("handler ran %d times", n)
	}
}

// TestDirectConnectionMustOpenAPipe: a direct connection whose first
// frame is a call, not a pipe, is closed without the handler running.
func TestDirectConnectionMustOpenAPipe(t *testing.T) {
	srv := listenTCP(t, quiet)
	served := countServed(srv)
	conn := dialDirect(t, srv)
	hdr := []byte{0x81, 0xa1, 'm', 0xa1, 'x'}
	open := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)))
	_, _ = conn.Write(append(append(open, hdr...), 0, 0, 0, 0))
	if !closedByPeer(conn) {
		t.Fatal("the connection stayed open")
	}
	if n := served.Load(); n != 0 {
		t.Errorf("handler ran %d times", n)
	}
}

// TestConnectionFirstBytesBounded: an unknown preamble is refused, and a
// connection that sends nothing is closed once HandshakeTimeout passed.
func TestConnectionFirstBytesBounded(t *testing.T) {
	opts := quiet
	opts.HandshakeTimeout = 200 * time.Millisecond
	srv := listenTCP(t, opts)
	for _, first := range []string{"STOWAGE-PIPX", ""} {
		conn, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if first != "" {
			if _, err := conn.Write([]byte(first)); err != nil {
				t.Fatal(err)
			}
		}
		if !closedByPeer(conn) {
			t.Errorf("first bytes %q: the connection stayed open", first)
		}
	}
}

// TestStalledPeerEndsDirectPipe: a peer that sends calls on a direct pipe
// and never reads the answers does not hold the callee's writer (and the
// pipe's handlers) for as long as TCP retries: once a write made no way
// for ConnectionWriteTimeout, the callee closes the connection.
func TestStalledPeerEndsDirectPipe(t *testing.T) {
	opts := quiet
	opts.ConnectionWriteTimeout = 200 * time.Millisecond
	srv := listenTCP(t, opts)
	answer := make([]byte, 1<<20)
	srv.SetHandler(func(context.Context, string, string, []byte) ([]byte, error) { return answer, nil })
	conn := dialDirect(t, srv)
	out := pipeOpenFrame()
	// More answers than the two ends' socket buffers hold.
	for id := range uint64(32) {
		out = append(out, 1)
		out = binary.BigEndian.AppendUint64(out, id+1)
		out = binary.BigEndian.AppendUint32(out, uint32(8+1+len("big")))
		out = binary.BigEndian.AppendUint64(out, 0)
		out = append(out, byte(len("big")))
		out = append(out, "big"...)
	}
	if _, err := conn.Write(out); err != nil {
		t.Fatal(err)
	}
	// Read nothing until the callee's writer has been stuck for longer
	// than the timeout; then what it wrote drains, and the connection
	// must end there.
	time.Sleep(time.Second)
	if !closedByPeer(conn) {
		t.Fatal("the callee kept the connection of a peer that read no answer past ConnectionWriteTimeout")
	}
}

// stillOpen reports whether conn stays open, with nothing to read, for d.
func stillOpen(conn net.Conn, d time.Duration) bool {
	conn.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	_, err := conn.Read(b[:])
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestIncomingConnectionsCapped: once a member serves MaxConnections
// incoming connections, a further one (a direct pipe, or a member's
// session) is closed at once, without an answer to its preamble, while
// the ones served stay open; when one of them ends, the next is served.
// The refusals are logged, the first few each and then one line per
// interval that counts them, so a dialler cannot fill the log.
func TestIncomingConnectionsCapped(t *testing.T) {
	opts := quiet
	opts.MaxConnections = 2
	rec := newRecorder()
	opts.Logger = slog.New(rec)
	srv := listenTCP(t, opts)
	echoFrom(srv)
	a, b := dialDirect(t, srv), dialDirect(t, srv)
	// A member counts a pipe before it answers the preamble: the third
	// dialler gets no answer.
	const refused = 30
	for i := range refused {
		conn, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("STOWAGE-PIPE")); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(longStop))
		if n, err := conn.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Fatalf("connection %d past MaxConnections 2 answered (%d bytes, %v), want it closed without an answer", i+3, n, err)
		}
		conn.Close()
	}
	rec.mu.Lock()
	var lines []string
	for _, l := range rec.lines {
		if strings.Contains(l, "too many incoming connections") {
			lines = append(lines, l)
		}
	}
	rec.mu.Unlock()
	if len(lines) < 5 || len(lines) > 6 {
		t.Fatalf("%d connections refused gave %d log lines, want 5 or 6 (the first 5, then one per 10 s): %q", refused, len(lines), lines)
	}
	cli := listenTCP(t, quiet)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := cli.Call(ctx, srv.Addr(), "echo", nil); err == nil {
		t.Fatal("a member's call was served over a third connection with MaxConnections 2")
	}
	for i, c := range []net.Conn{a, b} {
		if !stillOpen(c, 200*time.Millisecond) {
			t.Fatalf("connection %d of the 2 served was closed", i+1)
		}
	}
	a.Close()
	deadline := time.Now().Add(longStop)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := cli.Call(ctx, srv.Addr(), "echo", nil)
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no call served after one of the 2 connections closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !stillOpen(b, 100*time.Millisecond) {
		t.Fatal("the other connection was closed")
	}
}
