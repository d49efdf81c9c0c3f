package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// The transport suite: every test here runs against each Transport
// implementation.

// trEnv is one test's supply of transports of one implementation.
type trEnv struct {
	// listen returns a new transport at a fresh address, closed when the
	// test ends.
	listen func() cluster.Transport
	// dead is an address nobody serves.
	dead string
	// mem is the network of the in-memory kind, nil for the others.
	mem *cluster.MemNetwork
}

var transportKinds = []struct {
	name  string
	setup func(t *testing.T) trEnv
}{
	{"mem", func(t *testing.T) trEnv {
		n := cluster.NewMemNetwork()
		i := 0
		return trEnv{
			listen: func() cluster.Transport {
				i++
				tr := n.Transport(fmt.Sprintf("member-%d", i))
				t.Cleanup(func() { tr.Close() })
				return tr
			},
			dead: "member-nobody",
			mem:  n,
		}
	}},
	{"tcp", func(t *testing.T) trEnv {
		return trEnv{
			listen: func() cluster.Transport { return listenTCP(t, cluster.TCPOptions{}) },
			dead:   deadTCPAddr(t),
		}
	}},
}

func forEachTransport(t *testing.T, f func(t *testing.T, env trEnv)) {
	for _, k := range transportKinds {
		t.Run(k.name, func(t *testing.T) { f(t, k.setup(t)) })
	}
}

// listenTCP returns a TCP transport on a free loopback port, closed when
// the test ends.
func listenTCP(t testing.TB, opts cluster.TCPOptions) *cluster.TCPTransport {
	t.Helper()
	tr, err := cluster.ListenTCP("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := tr.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return tr
}

// deadTCPAddr returns a loopback address with nothing listening.
func deadTCPAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// callCtx is a call's context bounded by longStop.
func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	t.Cleanup(cancel)
	return ctx
}

// echo answers "re:" followed by the request.
func echo(_ context.Context, _, _ string, body []byte) ([]byte, error) {
	return append([]byte("re:"), body...), nil
}

// wait waits for ch to be closed or to deliver, at most longStop.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(longStop)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

func TestTransportRoundTrip(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		type request struct{ from, method, body string }
		got := make(chan request, 2)
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			got <- request{from, method, string(body)}
			return append([]byte("re:"), body...), nil
		})
		for i, body := range []string{"hello", "again on the same connection"} {
			ans, err := a.Call(callCtx(t), b.Addr(), "echo", []byte(body))
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if string(ans) != "re:"+body {
				t.Errorf("call %d: answer %q, want %q", i, ans, "re:"+body)
			}
			want := request{a.Addr(), "echo", body}
			if r := wait(t, got, "the handler"); r != want {
				t.Errorf("call %d: handler saw %+v, want %+v", i, r, want)
			}
		}
	})
}

func TestTransportConcurrentCalls(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		var served atomic.Int64
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			served.Add(1)
			return append([]byte(method+":"), body...), nil
		})
		const n = 200
		ctx := callCtx(t)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				method, body := fmt.Sprintf("m%d", i%7), fmt.Sprintf("body-%d", i)
				ans, err := a.Call(ctx, b.Addr(), method, []byte(body))
				if err != nil {
					t.Errorf("call %d: %v", i, err)
					return
				}
				if want := method + ":" + body; string(ans) != want {
					t.Errorf("call %d: answer %q, want %q", i, ans, want)
				}
			})
		}
		wg.Wait()
		if got := served.Load(); got != n {
			t.Errorf("handler ran %d times, want %d", got, n)
		}
	})
}

func TestTransportLargeBody(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			return body, nil
		})
		body := make([]byte, 64<<20)
		for i := range body {
			body[i] = byte(i*7 + i>>12)
		}
		ans, err := a.Call(callCtx(t), b.Addr(), "echo", body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ans, body) {
			t.Fatalf("64 MiB echo differs: got %d bytes", len(ans))
		}
	})
}

func TestTransportEmptyBody(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		sizes := make(chan int, 1)
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			sizes <- len(body)
			return nil, nil
		})
		ans, err := a.Call(callCtx(t), b.Addr(), "ping", nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(ans) != 0 {
			t.Errorf("answer %q, want empty", ans)
		}
		if n := wait(t, sizes, "the handler"); n != 0 {
			t.Errorf("handler saw a %d-byte body, want empty", n)
		}
	})
}

func TestTransportRemoteError(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			return []byte("ignored"), errors.New("no such map: " + string(body))
		})
		_, err := a.Call(callCtx(t), b.Addr(), "get", []byte("orders"))
		var re *cluster.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("error %v (%T), want a *RemoteError", err, err)
		}
		want := cluster.RemoteError{Addr: b.Addr(), Method: "get", Message: "no such map: orders"}
		if *re != want {
			t.Errorf("got %+v, want %+v", *re, want)
		}
		if !cluster.IsRemote(err) {
			t.Error("IsRemote is false")
		}
		if errors.Is(err, cluster.ErrUnreachable) || errors.Is(err, cluster.ErrNoHandler) {
			t.Errorf("a handler's error is ErrUnreachable or ErrNoHandler: %v", err)
		}
	})
}

// A member whose table does not name the caller as a replica refuses a
// replicated method with ErrNotReplica, and the caller can tell that
// refusal from a handler's own error: it may ask again once the member has
// the newer table.
func TestTransportNotReplicaRecognised(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			if string(body) == "refuse" {
				return nil, fmt.Errorf("%w: digest of partition 2 from %s, which the table does not name as its replica", cluster.ErrNotReplica, from)
			}
			return nil, errors.New(cluster.ErrNotReplica.Error() + " in the words of a handler")
		})
		_, err := a.Call(callCtx(t), b.Addr(), "digest", []byte("refuse"))
		if !cluster.IsRemote(err) || !errors.Is(err, cluster.ErrNotReplica) {
			t.Errorf("refusal %v: remote %v, ErrNotReplica %v; want both", err, cluster.IsRemote(err), errors.Is(err, cluster.ErrNotReplica))
		}
		_, err = a.Call(callCtx(t), b.Addr(), "digest", []byte("other"))
		if err == nil || errors.Is(err, cluster.ErrNotReplica) {
			t.Errorf("another error %v taken for ErrNotReplica", err)
		}
	})
}

func TestTransportNoHandler(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		_, err := a.Call(callCtx(t), b.Addr(), "get", nil)
		var re *cluster.RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("error %v (%T), want a *RemoteError", err, err)
		}
		if re.Message != cluster.ErrNoHandler.Error() {
			t.Errorf("message %q, want %q", re.Message, cluster.ErrNoHandler.Error())
		}
		if !errors.Is(err, cluster.ErrNoHandler) {
			t.Errorf("errors.Is(%v, ErrNoHandler) is false", err)
		}
		b.SetHandler(echo)
		if ans, err := a.Call(callCtx(t), b.Addr(), "get", []byte("x")); err != nil || string(ans) != "re:x" {
			t.Errorf("once the handler is installed: %q, %v", ans, err)
		}
	})
}

func TestTransportDeadlineReachesHandler(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		type seen struct {
			deadline time.Time
			hasDL    bool
			err      error
		}
		handled, returned := make(chan seen, 1), make(chan struct{})
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			dl, ok := ctx.Deadline()
			<-ctx.Done()
			handled <- seen{dl, ok, ctx.Err()}
			<-returned // answer only once the caller has given up
			return nil, ctx.Err()
		})
		const timeout = 200 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		deadline, _ := ctx.Deadline()
		_, err := a.Call(ctx, b.Addr(), "slow", nil)
		late := time.Since(deadline)
		close(returned)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v, want context.DeadlineExceeded", err)
		}
		if errors.Is(err, cluster.ErrUnreachable) {
			t.Error("a deadline is ErrUnreachable")
		}
		if late > 2*time.Second {
			t.Errorf("Call returned %v after its deadline", late)
		}
		s := wait(t, handled, "the handler to see its context end")
		if !s.hasDL {
			t.Fatal("the handler's context has no deadline")
		}
		if d := s.deadline.Sub(deadline).Abs(); d > time.Millisecond {
			t.Errorf("handler's deadline %v is %v away from the caller's %v", s.deadline, d, deadline)
		}
		if !errors.Is(s.err, context.DeadlineExceeded) {
			t.Errorf("handler's context ended with %v, want DeadlineExceeded", s.err)
		}
	})
}

func TestTransportCallerCancel(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		started := make(chan struct{})
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			close(started)
			<-ctx.Done() // ends with the caller (TCP) or with b's Close (mem)
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := make(chan error, 1)
		go func() {
			_, err := a.Call(ctx, b.Addr(), "slow", nil)
			res <- err
		}()
		wait(t, started, "the handler to start")
		cancel()
		err := wait(t, res, "Call to return after cancel")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
		if errors.Is(err, cluster.ErrUnreachable) {
			t.Error("a cancelled call is ErrUnreachable")
		}
	})
}

func TestTransportUnreachable(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a := env.listen()
		_, err := a.Call(callCtx(t), env.dead, "get", []byte("x"))
		if !errors.Is(err, cluster.ErrUnreachable) {
			t.Errorf("error %v, want ErrUnreachable", err)
		}
		if cluster.IsRemote(err) {
			t.Error("IsRemote is true for an unreachable member")
		}
	})
}

func TestTransportCloseWaitsForHandler(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b := env.listen(), env.listen()
		sawDone, release := make(chan struct{}), make(chan struct{})
		started := make(chan struct{})
		var finished atomic.Bool
		b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
			close(started)
			<-ctx.Done()
			close(sawDone)
			<-release
			finished.Store(true)
			return nil, ctx.Err()
		})
		ctx := callCtx(t)
		res := make(chan error, 1)
		go func() {
			_, err := a.Call(ctx, b.Addr(), "slow", nil)
			res <- err
		}()
		wait(t, started, "the handler to start")
		closed := make(chan error, 1)
		go func() { closed <- b.Close() }()
		wait(t, sawDone, "the handler's context to end on Close")
		// Close must not return while the handler runs; give a Close
		// that does not wait ample time to show it.
		select {
		case <-closed:
			t.Fatal("Close returned while the handler still runs")
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		if err := wait(t, closed, "Close"); err != nil {
			t.Errorf("Close: %v", err)
		}
		if !finished.Load() {
			t.Error("Close returned before the handler did")
		}
		err := wait(t, res, "the call to fail")
		if err == nil {
			t.Error("a call interrupted by Close succeeded")
		}
		if errors.Is(err, cluster.ErrUnreachable) {
			t.Errorf("a call interrupted by the callee's Close is ErrUnreachable (it was delivered): %v", err)
		}
	})
}

func TestTransportCallsAfterClose(t *testing.T) {
	forEachTransport(t, func(t *testing.T, env trEnv) {
		a, b, c := env.listen(), env.listen(), env.listen()
		b.SetHandler(echo)
		if _, err := a.Call(callCtx(t), b.Addr(), "get", nil); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if _, err := a.Call(callCtx(t), b.Addr(), "get", nil); !errors.Is(err, cluster.ErrUnreachable) {
			t.Errorf("call from a closed transport: %v, want ErrUnreachable", err)
		}
		addr := b.Addr()
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Call(callCtx(t), addr, "get", nil); !errors.Is(err, cluster.ErrUnreachable) {
			t.Errorf("call to a closed transport: %v, want ErrUnreachable", err)
		}
	})
}

func TestMemCutHeal(t *testing.T) {
	n := cluster.NewMemNetwork()
	a, b := n.Transport("a"), n.Transport("b")
	defer a.Close()
	defer b.Close()
	a.SetHandler(echo)
	b.SetHandler(echo)
	call := func(from, to cluster.Transport) error {
		_, err := from.Call(callCtx(t), to.Addr(), "get", nil)
		return err
	}
	n.Cut("a", "b")
	if err := call(a, b); !errors.Is(err, cluster.ErrUnreachable) {
		t.Errorf("a→b after Cut(a, b): %v, want ErrUnreachable", err)
	}
	if err := call(b, a); err != nil {
		t.Errorf("b→a after Cut(a, b) (one direction): %v", err)
	}
	n.Heal("a", "b")
	if err := call(a, b); err != nil {
		t.Errorf("a→b after Heal: %v", err)
	}
	n.CutBoth("a", "b")
	for _, p := range [][2]cluster.Transport{{a, b}, {b, a}} {
		if err := call(p[0], p[1]); !errors.Is(err, cluster.ErrUnreachable) {
			t.Errorf("%s→%s after CutBoth: %v, want ErrUnreachable", p[0].Addr(), p[1].Addr(), err)
		}
	}
	n.HealAll()
	for _, p := range [][2]cluster.Transport{{a, b}, {b, a}} {
		if err := call(p[0], p[1]); err != nil {
			t.Errorf("%s→%s after HealAll: %v", p[0].Addr(), p[1].Addr(), err)
		}
	}
}

func TestMemFreezeThaw(t *testing.T) {
	n := cluster.NewMemNetwork()
	a, b, c := n.Transport("a"), n.Transport("b"), n.Transport("c")
	defer a.Close()
	defer b.Close()
	defer c.Close()
	for _, x := range []*cluster.MemTransport{a, b, c} {
		x.SetHandler(echo)
	}
	n.Freeze("b")
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	if _, err := a.Call(short(), "b", "get", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a→b while b is frozen: %v, want the caller's deadline (no refusal, no answer)", err)
	}
	if _, err := b.Call(short(), "c", "get", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("b→c while b is frozen: %v, want the caller's deadline", err)
	}
	if _, err := a.Call(callCtx(t), "c", "get", nil); err != nil {
		t.Errorf("a→c while b is frozen: %v", err)
	}
	// A call waiting on a frozen member goes ahead once it is thawed.
	done := make(chan error, 1)
	go func() {
		_, err := a.Call(callCtx(t), "b", "get", nil)
		done <- err
	}()
	n.Thaw("b")
	if err := <-done; err != nil {
		t.Errorf("a→b after Thaw: %v", err)
	}
}
