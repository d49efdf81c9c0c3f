package cluster

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestServedCtxEndsWhatIsMadeFromIt: contexts made from a served call's
// context end with it and with its error, without a goroutine each;
// AfterFunc's stop keeps a function from running.
func TestServedCtxEndsWhatIsMadeFromIt(t *testing.T) {
	ctx := newServedCtx(time.Now().Add(time.Hour).UnixNano())
	before := runtime.NumGoroutine()
	const n = 50
	children := make([]context.Context, n)
	for i := range children {
		c, cancel := context.WithTimeout(ctx, 2*time.Hour)
		defer cancel()
		children[i] = c
	}
	if got := runtime.NumGoroutine() - before; got >= n {
		t.Errorf("%d goroutines started for %d contexts made from a served one", got, n)
	}
	if dl, ok := children[0].Deadline(); !ok || !dl.Equal(ctx.deadline) {
		t.Errorf("a child's deadline is %v, %v; want the call's %v", dl, ok, ctx.deadline)
	}
	ran, stopped := make(chan struct{}), make(chan struct{}, 1)
	context.AfterFunc(ctx, func() { close(ran) })
	stop := context.AfterFunc(ctx, func() { stopped <- struct{}{} })
	if !stop() {
		t.Error("stop of a function not yet run reports false")
	}
	if ctx.Err() != nil {
		t.Fatalf("a served context ended before end: %v", ctx.Err())
	}
	ctx.end(context.DeadlineExceeded)
	ctx.end(context.Canceled) // a second end changes nothing
	for i, c := range children {
		select {
		case <-c.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("child %d did not end with its parent", i)
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Fatalf("child %d ended with %v, want DeadlineExceeded", i, c.Err())
		}
	}
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("an AfterFunc did not run")
	}
	select {
	case <-stopped:
		t.Error("a stopped AfterFunc ran")
	default:
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Errorf("ended with %v (cause %v), want DeadlineExceeded", ctx.Err(), context.Cause(ctx))
	}
	late, cancel := context.WithCancel(ctx)
	defer cancel()
	if !errors.Is(late.Err(), context.DeadlineExceeded) {
		t.Errorf("a context made after the end: %v, want DeadlineExceeded", late.Err())
	}
}

// TestPipeSweepEndsExpiredHandlers: a pipe's sweep ends the contexts of
// the handlers past their deadline with DeadlineExceeded and leaves the
// others; it stays armed while a handler with a deadline runs.
func TestPipeSweepEndsExpiredHandlers(t *testing.T) {
	tr, err := ListenTCP("127.0.0.1:0", TCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	sp := &pipeServer{t: tr, running: map[uint64]servedCall{}}
	sp.sweep = time.AfterFunc(time.Hour, sp.sweepCalls)
	sp.sweep.Stop()
	past := newServedCtx(time.Now().Add(-time.Millisecond).UnixNano())
	future := newServedCtx(time.Now().Add(time.Hour).UnixNano())
	none := newServedCtx(0)
	sp.running[1], sp.running[2], sp.running[3] = servedCall{past}, servedCall{future}, servedCall{none}
	sp.sweepCalls()
	if !errors.Is(past.Err(), context.DeadlineExceeded) {
		t.Errorf("a handler past its deadline: %v, want DeadlineExceeded", past.Err())
	}
	if future.Err() != nil || none.Err() != nil {
		t.Errorf("handlers within their deadline or without one ended: %v, %v", future.Err(), none.Err())
	}
	sp.mu.Lock()
	armed := sp.sweeping
	sp.mu.Unlock()
	if !armed {
		t.Error("the sweep is not armed while a handler with a deadline runs")
	}
	sp.endAll()
	if !errors.Is(future.Err(), context.Canceled) || !errors.Is(none.Err(), context.Canceled) {
		t.Errorf("once the pipe ended: %v, %v; want Canceled", future.Err(), none.Err())
	}
}

func newServedCtx(deadlineUnixNano int64) *servedCtx {
	c := &servedCtx{}
	c.init(deadlineUnixNano)
	return c
}
