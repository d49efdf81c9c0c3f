package objstore_test

import (
	"errors"
	"testing"

	"github.com/stowage/stowage/fsbackend/internal/objstore"
)

type fakeClient struct {
	id           int
	idle, closed int
}

func TestClients(t *testing.T) {
	made := 0
	newClient := func() (*fakeClient, error) { made++; return &fakeClient{id: made}, nil }
	cs := objstore.NewClients[string](2,
		func(c *fakeClient) { c.idle++ },
		func(c *fakeClient) { c.closed++ })

	a1, releaseA1, _ := cs.Acquire("a", newClient)
	a2, releaseA2, _ := cs.Acquire("a", newClient)
	if a1 != a2 || made != 1 {
		t.Fatalf("two acquires of one key made %d clients", made)
	}
	releaseA1()
	releaseA1() // a second call does nothing
	if a1.idle != 0 {
		t.Fatal("idle called while the client is still used")
	}
	releaseA2()
	if a1.idle != 1 || a1.closed != 0 {
		t.Fatalf("after the last release: idle %d, closed %d; want 1, 0 (still cached)", a1.idle, a1.closed)
	}

	// An evicted client in use closes after its last release; an unused
	// one at once.
	b, releaseB, _ := cs.Acquire("b", newClient)
	cs.Acquire("c", newClient) // evicts a, the least recently used
	if a1.closed != 1 {
		t.Fatalf("evicted unused client closed %d times, want 1", a1.closed)
	}
	cs.Purge()
	if b.closed != 0 {
		t.Fatal("purged client closed while in use")
	}
	releaseB()
	if b.closed != 1 || b.idle != 0 {
		t.Fatalf("purged client after its release: closed %d, idle %d; want 1, 0", b.closed, b.idle)
	}
	if again, _, _ := cs.Acquire("b", newClient); again == b {
		t.Fatal("a purged client was handed out again")
	}

	errNew := errors.New("no client")
	if _, release, err := cs.Acquire("d", func() (*fakeClient, error) { return nil, errNew }); !errors.Is(err, errNew) || release != nil {
		t.Fatalf("failed newClient: %v", err)
	}
	if c, _, _ := cs.Acquire("d", newClient); c == nil {
		t.Fatal("a failed newClient left an entry")
	}
}
