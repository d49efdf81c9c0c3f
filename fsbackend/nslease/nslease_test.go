package nslease_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestLeaseLocal(t *testing.T) {
	dir := t.TempDir()
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS {
		f, err := local.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}, "ns/cluster-a")
}

func TestLeaseMemory(t *testing.T) {
	f := memfs.New()
	fsbackendtest.RunLease(t, func(t *testing.T) fsbackend.FS { return f }, "ns/cluster-a")
}
