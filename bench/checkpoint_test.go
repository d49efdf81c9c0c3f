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
	if res.Lists != 1 || res.Stats != 1 {
		t.Errorf("per latest lookup %v List and %v Stat calls, want 1 and 1", res.Lists, res.Stats)
	}
	if res.Stores != 4 || res.Store <= 0 || res.StoreAll <= 0 || res.Raw <= 0 || res.RawFloor <= 0 || res.RawFloorRetire != 0 || res.Latest <= 0 {
		t.Errorf("result not filled in: %+v", res)
	}
}

func TestCheckpointDeleteLeavesNothing(t *testing.T) {
	res, err := CheckpointDelete(context.Background(), t.TempDir(), 50, 2)
	if err != nil {
		t.Fatal(err) // also when files of a deleted job are left
	}
	if res.Checkpoints != 50 || res.Rounds != 2 || res.Delete <= 0 || res.Raw <= 0 {
		t.Errorf("result not filled in: %+v", res)
	}
}
