package dmap

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

func opTestEngine(timeout time.Duration) *Engine {
	return &Engine{cfg: Config{OpTimeout: timeout}, deadlines: newOpDeadlines()}
}

// TestOpCtxDeadlineEndsBySweep: an operation whose context has no
// deadline gets OpTimeout's: Err is nil before it and DeadlineExceeded
// from it on, Done closes by the sweep (the context has no timer of its
// own), and contexts made from it end with it.
func TestOpCtxDeadlineEndsBySweep(t *testing.T) {
	const timeout = 80 * time.Millisecond
	e := opTestEngine(timeout)
	start := time.Now()
	c := e.bound(context.Background())
	defer c.cancel()
	dl, ok := c.Deadline()
	if !ok || dl.Before(start.Add(timeout)) || dl.After(time.Now().Add(timeout)) {
		t.Fatalf("deadline %v, %v; want OpTimeout from now", dl, ok)
	}
	child, cancelChild := context.WithCancel(c)
	defer cancelChild()
	if err := c.Err(); err != nil {
		t.Fatalf("ended before its deadline: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the deadline")
	}
	if time.Now().Before(dl) {
		t.Errorf("Done closed %v before the deadline", time.Until(dl))
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Errorf("Err = %v, want DeadlineExceeded", c.Err())
	}
	select {
	case <-child.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context made from it did not end with it")
	}
	if !errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("child Err = %v, want DeadlineExceeded", child.Err())
	}
	// The sweep forgets it, and stops once nothing is left.
	deadline := time.Now().Add(10 * time.Second)
	for e.deadlines.inFlight() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d contexts still swept", e.deadlines.inFlight())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOpCtxErrExactAtDeadline: Err reports the deadline as soon as it
// passed, before any sweep closed Done.
func TestOpCtxErrExactAtDeadline(t *testing.T) {
	e := opTestEngine(time.Hour)
	c := e.bound(context.Background())
	defer c.cancel()
	c.deadline = time.Now().Add(-time.Millisecond) // as if an hour went by
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err past the deadline = %v, want DeadlineExceeded", c.Err())
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done open once Err reported the deadline")
	}
}

// TestOpCtxParentAndCancel: a parent's end ends the operation's context
// with the parent's error; the operation returning ends it as Canceled
// and drops it from the sweep; a parent with a deadline keeps its own
// and is not swept.
func TestOpCtxParentAndCancel(t *testing.T) {
	e := opTestEngine(time.Hour)
	parent, cancelParent := context.WithCancel(context.Background())
	c := e.bound(parent)
	cancelParent()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the parent's cancel did not end it")
	}
	if !errors.Is(c.Err(), context.Canceled) {
		t.Errorf("Err = %v, want Canceled", c.Err())
	}
	c.cancel()

	c2 := e.bound(context.Background())
	before := runtime.NumGoroutine()
	ran := make(chan struct{})
	context.AfterFunc(c2, func() { close(ran) })
	if got := runtime.NumGoroutine() - before; got > 0 {
		t.Errorf("AfterFunc of an operation's context started %d goroutines", got)
	}
	c2.cancel()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc did not run once the operation returned")
	}
	if !errors.Is(c2.Err(), context.Canceled) {
		t.Errorf("Err after cancel = %v, want Canceled", c2.Err())
	}
	e.deadlines.sweep()
	if n := e.deadlines.inFlight(); n != 0 {
		t.Errorf("%d ended contexts still swept", n)
	}

	want := time.Now().Add(time.Minute)
	dctx, cancel := context.WithDeadline(context.Background(), want)
	defer cancel()
	c3 := e.bound(dctx)
	defer c3.cancel()
	if dl, ok := c3.Deadline(); !ok || !dl.Equal(want) {
		t.Errorf("deadline %v, %v; want the parent's %v", dl, ok, want)
	}
	if n := e.deadlines.inFlight(); n != 0 {
		t.Errorf("a context with its parent's deadline is swept (%d)", n)
	}
}
