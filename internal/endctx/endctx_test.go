package endctx

import (
	"context"
	"errors"
	"testing"
	"time"
)

// ctx is the smallest context around an Ending, as its users make one.
type ctx struct{ Ending }

func (*ctx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *ctx) Err() error                { return c.Cause() }
func (*ctx) Value(any) any               { return nil }

var errEnd = errors.New("ended")

func TestEndClosesDoneAndCallsAfterFuncsOnce(t *testing.T) {
	c := &ctx{}
	done := c.Done()
	calls := 0
	c.AfterFunc(func() { calls++ })
	stopped := c.AfterFunc(func() { t.Error("a stopped function was called") })
	if !stopped() {
		t.Fatal("stop of a pending function reported false")
	}
	if c.Ended() || c.Cause() != nil {
		t.Fatal("ended before End")
	}
	c.End(errEnd)
	c.End(errors.New("second"))
	select {
	case <-done:
	default:
		t.Fatal("Done not closed by End")
	}
	if calls != 1 {
		t.Fatalf("after function called %d times, want 1", calls)
	}
	if !errors.Is(c.Cause(), errEnd) || !c.Ended() {
		t.Fatalf("Cause %v after End, want the first error", c.Cause())
	}
	select {
	case <-c.Done(): // asked for only after the end
	default:
		t.Fatal("Done asked for after End is not closed")
	}
}

func TestAfterFuncOnEndedRunsAtOnce(t *testing.T) {
	c := &ctx{}
	c.End(errEnd)
	ran := make(chan struct{})
	stop := c.AfterFunc(func() { close(ran) })
	<-ran
	if stop() {
		t.Fatal("stop after the function ran reported true")
	}
}

func TestContextsMadeFromItEndWithIt(t *testing.T) {
	c := &ctx{}
	child, cancel := context.WithCancel(c)
	defer cancel()
	c.End(context.Canceled)
	// context.WithCancel finds AfterFunc and ends the child on the
	// goroutine that ended c: by now, without waiting.
	select {
	case <-child.Done():
	default:
		t.Fatal("a child context did not end with its parent at once")
	}
}
