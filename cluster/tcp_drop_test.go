package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Drop fails a call waiting on a member at once (outcome unknown, not
// "unreachable"), and the next call dials again.
func TestTCPDropFailsCallsInFlight(t *testing.T) {
	a, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := cluster.ListenTCP("127.0.0.1:0", cluster.TCPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	entered := make(chan struct{}, 1)
	b.SetHandler(func(ctx context.Context, from, method string, body []byte) ([]byte, error) {
		if method == "hang" {
			entered <- struct{}{}
			<-ctx.Done()
		}
		return body, nil
	})
	errc := make(chan error, 1)
	go func() {
		_, err := a.Call(context.Background(), b.Addr(), "hang", nil)
		errc <- err
	}()
	<-entered
	a.Drop(b.Addr())
	select {
	case err := <-errc:
		if err == nil || errors.Is(err, cluster.ErrUnreachable) {
			t.Fatalf("call after Drop: %v; want an error of unknown outcome", err)
		}
	case <-time.After(longStop):
		t.Fatal("the call did not end after Drop")
	}
	ctx, cancel := context.WithTimeout(context.Background(), longStop)
	defer cancel()
	if got, err := a.Call(ctx, b.Addr(), "echo", []byte("x")); err != nil || string(got) != "x" {
		t.Fatalf("call after the drop: %q, %v", got, err)
	}
}
