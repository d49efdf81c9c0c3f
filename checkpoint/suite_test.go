package checkpoint_test

import (
	"testing"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
	"github.com/stowage/stowage/fsbackend/memfs"
)

func newLocal(t testing.TB) fsbackend.FS { return newLocalAt(t, t.TempDir()) }

func newLocalAt(t testing.TB, dir string) fsbackend.FS {
	fsys, err := local.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

// objectStoreFS is memfs without atomic rename, so the storage takes the
// path object stores take: a conditional create of the final name.
type objectStoreFS struct{ fsbackend.FS }

func (objectStoreFS) Capabilities() fsbackend.Capabilities {
	return fsbackend.Capabilities{ConditionalCreate: true}
}

func TestSuiteLocal(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS { return newLocal(t) })
}

func TestSuiteMemFS(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS { return memfs.New() })
}

func TestSuiteWithoutAtomicRename(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS { return objectStoreFS{memfs.New()} })
}
