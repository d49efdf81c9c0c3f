package bench

import (
	"context"
	"testing"
)

func TestCheckpointsOpensOneFilePerLatest(t *testing.T) {
	res, err := Checkpoints(context.Background(), t.TempDir(), 64<<10, 4, 300)
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesOpened != 1 {
		t.Errorf("files opened per latest lookup = %v, want 1", res.FilesOpened)
	}
	if res.Stores != 4 || res.Store <= 0 || res.Raw <= 0 || res.Latest <= 0 {
		t.Errorf("result not filled in: %+v", res)
	}
}
