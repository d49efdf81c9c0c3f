package checkpoint_test

import (
	"testing"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
)

func newLocal(t testing.TB) fsbackend.FS {
	fsys, err := local.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	return fsys
}

func TestSuiteLocal(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS { return newLocal(t) })
}
