package hdfs

import (
	"context"
	"os"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// These tests look inside the client cache; they need the fixture of
// testdata/hdfs (STOWAGE_TEST_HDFS).
func openInternal(t *testing.T, extra ...string) *FS {
	t.Helper()
	addr := os.Getenv("STOWAGE_TEST_HDFS")
	if addr == "" {
		t.Skip("STOWAGE_TEST_HDFS is not set: start the fixture with eval \"$(bash testdata/hdfs/start.sh)\"")
	}
	p := fsbackend.Properties{"fs.defaultFS": "hdfs://" + addr, "seatunnel.hadoop.dfs.client.socket-timeout": "59000"}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i]] = extra[i+1]
	}
	f, err := Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestClientCacheSharesAndCounts(t *testing.T) {
	a := openInternal(t)
	b := openInternal(t)
	if a.cur != b.cur {
		t.Fatal("two FS with the same properties got different clients")
	}
	c := a.cur
	priv := openInternal(t, "disable.cache", "true")
	if priv.cur == c {
		t.Error("disable.cache: true shared the cached client")
	}
	other := openInternal(t, "seatunnel.hadoop.hadoop.user.name", "someone-else")
	if other.cur == c {
		t.Error("another user shared the client")
	}
	a.Close()
	if c.closed {
		t.Fatal("closing one FS closed the client the other still uses")
	}
	if _, err := b.List(context.Background(), "stowage-test"); err != nil {
		t.Fatalf("List on the remaining FS: %v", err)
	}
	b.Close()
	if !c.closed {
		t.Error("the client was not closed when its last user closed")
	}
	if got, ok := sharedClients.lru.Peek(c.key); ok && got == c {
		t.Error("a closed client is still in the cache")
	}
	// A new FS builds a new client.
	d := openInternal(t)
	if d.cur == c {
		t.Error("a closed client was handed out again")
	}
}

func TestClientCacheDropsBrokenClient(t *testing.T) {
	a := openInternal(t)
	b := openInternal(t)
	old := a.cur
	sharedClients.markBroken(old)
	// Both FS move to a fresh client on their next call; the broken one is
	// closed once neither holds it.
	ctx := context.Background()
	if _, err := a.List(ctx, "stowage-test"); err != nil {
		t.Fatal(err)
	}
	if a.cur == old {
		t.Fatal("a kept the broken client")
	}
	if old.closed {
		t.Fatal("the broken client was closed while b still held it")
	}
	if _, err := b.List(ctx, "stowage-test"); err != nil {
		t.Fatal(err)
	}
	if b.cur != a.cur {
		t.Error("after the rebuild the two FS do not share the new client")
	}
	if !old.closed {
		t.Error("the broken client was not closed after both let go")
	}
}
