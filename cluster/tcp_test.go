package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Tests of the TCP transport beyond the shared suite in transport_test.go.

func TestTCPAddr(t *testing.T) {
	tr := listenTCP(t, cluster.TCPOptions{})
	host, port, err := net.SplitHostPort(tr.Addr())
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr %q (%v), want 127.0.0.1 and the port picked", tr.Addr(), err)
	}

	const adv = "member-7.example:5802"
	caller := listenTCP(t, cluster.TCPOptions{Advertise: adv})
	if caller.Addr() != adv {
		t.Errorf("Addr %q, want the advertised %q", caller.Addr(), adv)
	}
	froms := make(chan string, 1)
	tr.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
		froms <- from
		return nil, nil
	})
	if _, err := caller.Call(callCtx(t), tr.Addr(), "ping", nil); err != nil {
		t.Fatal(err)
	}
	if from := wait(t, froms, "the handler"); from != adv {
		t.Errorf("handler saw the call from %q, want %q", from, adv)
	}
}

func TestListenTCPErrors(t *testing.T) {
	tr := listenTCP(t, cluster.TCPOptions{})
	if other, err := cluster.ListenTCP(tr.Addr(), cluster.TCPOptions{}); err == nil {
		other.Close()
		t.Error("a second ListenTCP on one address succeeded")
	}
	for _, o := range []cluster.TCPOptions{{DialTimeout: -time.Second}, {StreamWindow: 1024}, {KeepAliveInterval: -1}} {
		if tr, err := cluster.ListenTCP("127.0.0.1:0", o); err == nil {
			tr.Close()
			t.Errorf("ListenTCP accepted options %+v", o)
		}
	}
}

func TestTCPRedialAfterPeerRestart(t *testing.T) {
	a := listenTCP(t, cluster.TCPOptions{})
	b1, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := b1.Addr()
	answer := func(s string) cluster.Handler {
		return func(context.Context, string, string, []byte) ([]byte, error) { return []byte(s), nil }
	}
	b1.SetHandler(answer("first"))
	if ans, err := a.Call(callCtx(t), addr, "who", nil); err != nil || string(ans) != "first" {
		t.Fatalf("before the restart: %q, %v", ans, err)
	}
	if err := b1.Close(); err != nil {
		t.Fatal(err)
	}

	// The old connection is found broken (a call on it may still fail
	// with an unknown outcome first); then the re-dial is refused.
	deadline := time.Now().Add(longStop)
	for {
		_, err := a.Call(callCtx(t), addr, "who", nil)
		if errors.Is(err, cluster.ErrUnreachable) {
			break
		}
		if err == nil || cluster.IsRemote(err) {
			t.Fatalf("call to a closed member: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("still not ErrUnreachable after %v: %v", longStop, err)
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}

	b2, err := cluster.ListenTCP(addr, cluster.TCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	b2.SetHandler(answer("second"))
	for i := range 3 {
		if ans, err := a.Call(callCtx(t), addr, "who", nil); err != nil || string(ans) != "second" {
			t.Fatalf("call %d after the restart: %q, %v", i, ans, err)
		}
	}
}

func TestTCPTooLarge(t *testing.T) {
	const limit = 1 << 10
	small := cluster.WithMaxMessageSize(cluster.TCPOptions{}, limit)
	sized := func(n int) cluster.Handler {
		return func(context.Context, string, string, []byte) ([]byte, error) {
			return bytes.Repeat([]byte{'a'}, n), nil
		}
	}

	t.Run("request", func(t *testing.T) {
		a, b := listenTCP(t, small), listenTCP(t, cluster.TCPOptions{})
		var served atomic.Int64
		b.SetHandler(func(context.Context, string, string, []byte) ([]byte, error) {
			served.Add(1)
			return nil, nil
		})
		if _, err := a.Call(callCtx(t), b.Addr(), "put", make([]byte, limit+1)); !errors.Is(err, cluster.ErrTooLarge) {
			t.Errorf("request over the limit: %v, want ErrTooLarge", err)
		}
		// Refused before dialling: a dead address gives the same answer.
		if _, err := a.Call(callCtx(t), deadTCPAddr(t), "put", make([]byte, limit+1)); !errors.Is(err, cluster.ErrTooLarge) {
			t.Errorf("request over the limit to a dead address: %v, want ErrTooLarge", err)
		}
		if n := served.Load(); n != 0 {
			t.Errorf("handler ran %d times for refused requests", n)
		}
		if _, err := a.Call(callCtx(t), b.Addr(), "put", make([]byte, limit)); err != nil {
			t.Errorf("request at the limit: %v", err)
		}
		if n := served.Load(); n != 1 {
			t.Errorf("handler ran %d times, want 1", n)
		}
	})

	t.Run("answer", func(t *testing.T) {
		a, b := listenTCP(t, cluster.TCPOptions{}), listenTCP(t, small)
		b.SetHandler(sized(limit + 1))
		_, err := a.Call(callCtx(t), b.Addr(), "get", nil)
		if !errors.Is(err, cluster.ErrTooLarge) || cluster.IsRemote(err) {
			t.Errorf("answer over the callee's limit: %v, want ErrTooLarge", err)
		}
		b.SetHandler(sized(limit))
		if ans, err := a.Call(callCtx(t), b.Addr(), "get", nil); err != nil || len(ans) != limit {
			t.Errorf("answer at the limit: %d bytes, %v", len(ans), err)
		}
	})

	t.Run("answer over the caller's limit", func(t *testing.T) {
		a, b := listenTCP(t, small), listenTCP(t, cluster.TCPOptions{})
		b.SetHandler(sized(4 * limit))
		if _, err := a.Call(callCtx(t), b.Addr(), "get", nil); !errors.Is(err, cluster.ErrTooLarge) {
			t.Errorf("answer over the caller's limit: %v, want ErrTooLarge", err)
		}
		b.SetHandler(sized(limit))
		if ans, err := a.Call(callCtx(t), b.Addr(), "get", nil); err != nil || len(ans) != limit {
			t.Errorf("then an answer at the limit: %d bytes, %v", len(ans), err)
		}
	})

	t.Run("request over the callee's limit", func(t *testing.T) {
		a, b := listenTCP(t, cluster.TCPOptions{}), listenTCP(t, small)
		var served atomic.Int64
		b.SetHandler(func(context.Context, string, string, []byte) ([]byte, error) {
			served.Add(1)
			return []byte("ok"), nil
		})
		_, err := a.Call(callCtx(t), b.Addr(), "put", make([]byte, 4*limit))
		if err == nil || cluster.IsRemote(err) {
			t.Errorf("request over the callee's limit: %v, want a connection error", err)
		}
		if n := served.Load(); n != 0 {
			t.Errorf("handler ran %d times for a refused request", n)
		}
		// The callee dropped that connection; calls within the limit
		// reach it again on a new one.
		deadline := time.Now().Add(longStop)
		for {
			ans, err := a.Call(callCtx(t), b.Addr(), "put", []byte("x"))
			if err == nil {
				if string(ans) != "ok" {
					t.Errorf("answer %q", ans)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("no successful call after %v: %v", longStop, err)
			}
			time.Sleep(10 * time.Millisecond) // polling interval
		}
	})
}

func TestTCPCancelReachesHandler(t *testing.T) {
	a, b := listenTCP(t, cluster.TCPOptions{}), listenTCP(t, cluster.TCPOptions{})
	started, ended := make(chan struct{}), make(chan error, 1)
	b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := a.Call(ctx, b.Addr(), "slow", nil)
		res <- err
	}()
	wait(t, started, "the handler to start")
	cancel()
	if err := wait(t, res, "Call to return"); !errors.Is(err, context.Canceled) {
		t.Errorf("caller: %v, want context.Canceled", err)
	}
	if err := wait(t, ended, "the handler's context to end"); !errors.Is(err, context.Canceled) {
		t.Errorf("handler's context ended with %v, want context.Canceled", err)
	}
}

// recordSink is a slog.Handler that passes records to a channel.
type recordSink chan slog.Record

func (s recordSink) Enabled(context.Context, slog.Level) bool { return true }
func (s recordSink) WithAttrs([]slog.Attr) slog.Handler       { return s }
func (s recordSink) WithGroup(string) slog.Handler            { return s }
func (s recordSink) Handle(_ context.Context, r slog.Record) error {
	select {
	case s <- r.Clone():
	default: // a full sink drops records rather than block the transport
	}
	return nil
}

func TestTCPYamuxLogsThroughSlog(t *testing.T) {
	sink := make(recordSink, 64)
	tr := listenTCP(t, cluster.TCPOptions{Logger: slog.New(sink)})
	conn, err := net.Dial("tcp", tr.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A yamux header with protocol version 9: yamux logs it and drops
	// the connection.
	if _, err := conn.Write([]byte{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	for {
		r := wait(t, (<-chan slog.Record)(sink), "yamux's log record")
		if !strings.Contains(r.Message, "protocol version") {
			continue
		}
		if r.Level != slog.LevelError {
			t.Errorf("level %v, want ERROR", r.Level)
		}
		var component string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "component" {
				component = a.Value.String()
			}
			return true
		})
		if component != "yamux" {
			t.Errorf("component %q, want yamux", component)
		}
		return
	}
}

func BenchmarkTCPCall(b *testing.B) {
	a, srv := listenTCP(b, cluster.TCPOptions{}), listenTCP(b, cluster.TCPOptions{})
	srv.SetHandler(echo)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	body := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Call(ctx, srv.Addr(), "echo", body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTCPCallParallel(b *testing.B) {
	a, srv := listenTCP(b, cluster.TCPOptions{}), listenTCP(b, cluster.TCPOptions{})
	srv.SetHandler(echo)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	body := make([]byte, 64)
	b.ReportAllocs()
	b.SetParallelism(8) // calls in flight per CPU, sharing one connection
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := a.Call(ctx, srv.Addr(), "echo", body); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func TestTCPKeepAliveFindsDeadPeer(t *testing.T) {
	// A peer that accepts connections and then never answers, not even
	// yamux's pings.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	defer func() {
		l.Close()
		<-accepted
	}()

	a := listenTCP(t, cluster.TCPOptions{KeepAliveInterval: 50 * time.Millisecond, ConnectionWriteTimeout: 100 * time.Millisecond})
	start := time.Now()
	_, err = a.Call(callCtx(t), l.Addr().String(), "get", []byte("x"))
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call to a dead peer: %v, want the connection found broken", err)
	}
	if errors.Is(err, cluster.ErrUnreachable) {
		t.Errorf("a request sent before the peer was found dead is ErrUnreachable: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("dead peer found after %v", d)
	}
}
