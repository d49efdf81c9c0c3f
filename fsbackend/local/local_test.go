package local_test

import (
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/local"
)

func TestConformance(t *testing.T) {
	fsbackendtest.Run(t, func(t *testing.T) fsbackend.FS {
		f, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return f
	})
}
