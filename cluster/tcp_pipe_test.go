package cluster_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/stowage/stowage/cluster"
)

// Tests of the pipe: the calls of CallAsync to one member share a
// stream and their writes.

// asyncCall is CallAsync waited for.
func asyncCall(ctx context.Context, tr *cluster.TCPTransport, addr, method string, body []byte) ([]byte, error) {
	type answer struct {
		b   []byte
		err error
	}
	ch := make(chan answer, 1)
	tr.CallAsync(ctx, addr, method, body, func(b []byte, err error) { ch <- answer{b, err} })
	a := <-ch
	return a.b, a.err
}

// quiet are options without keep-alive pings, so that every write
// counted is a call's.
var quiet = cluster.TCPOptions{KeepAliveInterval: time.Hour}

// TestPipeLoneCallNotDelayed: a call made while no other is goes out in
// a write of its own at once: the handler runs while the caller has made
// no other call, and exactly one frame and one write went out for it.
func TestPipeLoneCallNotDelayed(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	arrived := make(chan string, 1)
	release := make(chan struct{})
	b.SetHandler(func(ctx context.Context, _, method string, body []byte) ([]byte, error) {
		if method == "hold" {
			arrived <- string(body)
			<-release
		}
		return append([]byte("re:"), body...), nil
	})
	// The pipe is opened by a first call.
	if got, err := asyncCall(callCtx(t), a, b.Addr(), "open", []byte("x")); err != nil || string(got) != "re:x" {
		t.Fatalf("first call: %q, %v", got, err)
	}
	before := a.Stats()
	res := make(chan error, 1)
	a.CallAsync(callCtx(t), b.Addr(), "hold", []byte("lone"), func(b []byte, err error) {
		if err == nil && string(b) != "re:lone" {
			err = errors.New("answer " + string(b))
		}
		res <- err
	})
	// Nothing else is sent: a writer that waited for company would never
	// deliver it.
	if got := wait(t, arrived, "the lone call to reach the handler"); got != "lone" {
		t.Fatalf("handler got %q", got)
	}
	sent := a.Stats()
	if f := sent.Frames - before.Frames; f != 1 {
		t.Errorf("%d frames written for a lone call, want 1", f)
	}
	if w := sent.Writes - before.Writes; w != 1 {
		t.Errorf("%d connection writes for a lone call, want 1", w)
	}
	close(release)
	if err := wait(t, res, "the answer"); err != nil {
		t.Fatal(err)
	}
}

// TestPipeConcurrentCallsShareWrites: many callers to one member at once
// take fewer writes than calls, on both ends of the connection.
func TestPipeConcurrentCallsShareWrites(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	b.SetHandler(echo)
	if _, err := asyncCall(callCtx(t), a, b.Addr(), "open", nil); err != nil {
		t.Fatal(err)
	}
	const writers, each = 64, 40
	ca, cb := a.Stats(), b.Stats()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				body := []byte{byte(w), byte(i)}
				got, err := asyncCall(callCtx(t), a, b.Addr(), "echo", body)
				if err != nil || !bytes.Equal(got, append([]byte("re:"), body...)) {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d calls failed or got another call's answer", n)
	}
	calls := uint64(writers * each)
	sa, sb := a.Stats(), b.Stats()
	if f := sa.Frames - ca.Frames; f != calls {
		t.Errorf("caller wrote %d frames for %d calls", f, calls)
	}
	reqWrites, ansWrites := sa.Writes-ca.Writes, sb.Writes-cb.Writes
	t.Logf("%d calls: %d writes of requests, %d writes of answers", calls, reqWrites, ansWrites)
	if reqWrites >= calls {
		t.Errorf("%d writes of requests for %d concurrent calls, want fewer than one per call", reqWrites, calls)
	}
	if ansWrites >= calls {
		t.Errorf("%d writes of answers for %d concurrent calls, want fewer than one per call", ansWrites, calls)
	}
}

// TestPipeDeadPeerHoldsUpNoOther: calls queued to a member that takes no
// bytes (its connection accepted, never read) wait, while calls to
// another member go through; the waiting calls end with their contexts.
func TestPipeDeadPeerHoldsUpNoOther(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				close(held)
				return
			}
			held <- c
		}
	}()
	t.Cleanup(func() {
		l.Close()
		for c := range held {
			c.Close()
		}
	})

	a, live := listenTCP(t, quiet), listenTCP(t, quiet)
	live.SetHandler(echo)
	dctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Far more than the stream window and the socket buffers hold: the
	// pipe to the dead member stalls in a write.
	const stuck = 200
	dead := make(chan error, stuck)
	big := make([]byte, 60<<10)
	// CallAsync waits while too much is queued: each call has its own
	// goroutine here.
	for range stuck {
		go a.CallAsync(dctx, l.Addr().String(), "put", big, func(_ []byte, err error) { dead <- err })
	}
	for i := range 20 {
		body := []byte{byte(i)}
		if got, err := asyncCall(callCtx(t), a, live.Addr(), "echo", body); err != nil || !bytes.Equal(got, append([]byte("re:"), body...)) {
			t.Fatalf("call %d to the live member while the other is dead: %q, %v", i, got, err)
		}
	}
	select {
	case err := <-dead:
		t.Fatalf("a call to the dead member ended before its context: %v", err)
	default:
	}
	cancel()
	for range stuck {
		if err := wait(t, (<-chan error)(dead), "a call to the dead member to end"); !errors.Is(err, context.Canceled) {
			t.Fatalf("call to the dead member: %v, want context.Canceled", err)
		}
	}
}

// TestPipeRequestBoundedBeforeRead: a pipe frame stating a request
// larger than a pipe request may be closes the connection before the
// payload is read, and no handler runs.
func TestPipeRequestBoundedBeforeRead(t *testing.T) {
	srv := listenTCP(t, quiet)
	served := countServed(srv)
	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sess, err := yamux.Client(conn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	st, err := sess.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	// The callee may close the connection before the write returns.
	_, _ = st.Write(oversizedPipeRequest())
	select {
	case <-sess.CloseChan():
	case <-time.After(longStop):
		t.Fatal("the connection stayed open after an oversized pipe frame")
	}
	if n := served.Load(); n != 0 {
		t.Errorf("handler ran %d times", n)
	}
}

// countServed makes tr's handler count the calls it serves.
func countServed(tr *cluster.TCPTransport) *atomic.Int64 {
	var served atomic.Int64
	tr.SetHandler(func(context.Context, string, string, []byte) ([]byte, error) {
		served.Add(1)
		return nil, nil
	})
	return &served
}

// pipeOpenFrame is a pipe's opening frame: header {"m": "\x00pipe"} and
// an empty body.
func pipeOpenFrame() []byte {
	hdr := []byte{0x81, 0xa1, 'm', 0xa5, 0, 'p', 'i', 'p', 'e'}
	open := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)))
	return append(append(open, hdr...), 0, 0, 0, 0)
}

// oversizedPipeRequest is a pipe's opening frame, then a request frame
// stating 1 GiB, of which a few bytes follow.
func oversizedPipeRequest() []byte {
	open := pipeOpenFrame()
	frame := []byte{1, 0, 0, 0, 0, 0, 0, 0, 1}
	frame = binary.BigEndian.AppendUint32(frame, 1<<30)
	return append(append(open, frame...), make([]byte, 64)...)
}

// TestPipeSenderIsTheCertificate: on the pipe as on a call's own stream,
// the handler is told the caller its certificate proves, not the one it
// states.
func TestPipeSenderIsTheCertificate(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	cli := listenTCP(t, cluster.TCPOptions{Security: &cluster.Security{Secret: secretA}})
	echoFrom(srv)
	const proven = "127.0.0.1:9"
	cluster.SetCertAddr(cli, proven)
	got, err := asyncCall(callCtx(t), cli, srv.Addr(), "who", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != proven {
		t.Errorf("handler saw %q, want the certificate's %q (the pipe stated %q)", got, proven, cli.Addr())
	}
}

// TestPipeCancelReachesHandler: a caller that gives up ends the
// handler's context, and gets its context's error.
func TestPipeCancelReachesHandler(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	started, ended := make(chan struct{}), make(chan error, 1)
	b.SetHandler(func(ctx context.Context, _, _ string, _ []byte) ([]byte, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	a.CallAsync(ctx, b.Addr(), "slow", nil, func(_ []byte, err error) { res <- err })
	wait(t, started, "the handler to start")
	cancel()
	if err := wait(t, res, "the call to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("caller: %v, want context.Canceled", err)
	}
	if err := wait(t, ended, "the handler's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler's context ended with %v, want context.Canceled", err)
	}
}

// TestPipeMaxStreams: the calls of a pipe count against the
// connection's MaxStreams: at most that many handlers run at once, the
// others are served later.
func TestPipeMaxStreams(t *testing.T) {
	srv := listenTCP(t, cluster.TCPOptions{MaxStreams: 2})
	cli := listenTCP(t, cluster.TCPOptions{})
	var running, most atomic.Int32
	release := make(chan struct{})
	srv.SetHandler(func(ctx context.Context, _, _ string, _ []byte) ([]byte, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, nil
	})
	const calls = 6
	errs := make(chan error, calls)
	for range calls {
		cli.CallAsync(callCtx(t), srv.Addr(), "slow", nil, func(_ []byte, err error) { errs <- err })
	}
	deadline := time.Now().Add(longStop)
	for running.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the first two calls did not start")
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
	time.Sleep(200 * time.Millisecond) // room for more handlers to start, were they allowed
	close(release)
	for range calls {
		if err := wait(t, (<-chan error)(errs), "a call to end"); err != nil {
			t.Error(err)
		}
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d handlers ran at once on one pipe, want 2", m)
	}
}

// TestPipeDeadlineReachesHandler: a handler served on a pipe has the
// caller's deadline, and its context, and one made from it, end with
// DeadlineExceeded once the deadline passed.
func TestPipeDeadlineReachesHandler(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	type seen struct {
		deadline    time.Time
		err, derivd error
	}
	ended := make(chan seen, 1)
	b.SetHandler(func(ctx context.Context, _, _ string, _ []byte) ([]byte, error) {
		dl, _ := ctx.Deadline()
		child, cancel := context.WithCancel(ctx)
		defer cancel()
		<-child.Done()
		ended <- seen{dl, ctx.Err(), child.Err()}
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	deadline, _ := ctx.Deadline()
	if _, err := asyncCall(ctx, a, b.Addr(), "slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller: %v, want context.DeadlineExceeded", err)
	}
	s := wait(t, ended, "the handler's context to end")
	if d := s.deadline.Sub(deadline).Abs(); d > time.Millisecond {
		t.Errorf("handler's deadline %v is %v away from the caller's %v", s.deadline, d, deadline)
	}
	if !errors.Is(s.err, context.DeadlineExceeded) || !errors.Is(s.derivd, context.DeadlineExceeded) {
		t.Errorf("handler's context ended with %v, one made from it with %v; want DeadlineExceeded", s.err, s.derivd)
	}
}

// TestPipeFullQueueDrains: calls queued while more than the pipe holds
// waits for the writer go out once it took what was queued before them;
// every one is answered.
func TestPipeFullQueueDrains(t *testing.T) {
	a, b := listenTCP(t, quiet), listenTCP(t, quiet)
	b.SetHandler(func(_ context.Context, _, _ string, body []byte) ([]byte, error) {
		return body[:1], nil
	})
	const calls = 160 // 160 × 60 KiB: more than twice what a pipe queues
	big := make([]byte, 60<<10)
	res := make(chan error, calls)
	for i := range calls {
		body := append([]byte{byte(i)}, big...)
		go a.CallAsync(callCtx(t), b.Addr(), "put", body, func(ans []byte, err error) {
			if err == nil && (len(ans) != 1 || ans[0] != byte(i)) {
				err = fmt.Errorf("call %d answered %v", i, ans)
			}
			res <- err
		})
	}
	for range calls {
		if err := wait(t, (<-chan error)(res), "a call to be answered"); err != nil {
			t.Fatal(err)
		}
	}
}
