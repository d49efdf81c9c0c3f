package bench

import (
	"context"

	"github.com/stowage/stowage/bench/writeamp"
)

// UploadsPerNewByte runs writeamp on a fresh map directory of the target:
// new records in group-commit batches through the file map store, with
// compaction, measuring the bytes uploaded per byte of new data in an
// early and later windows. It is meant for object stores, where every
// finished file is one upload.
func UploadsPerNewByte(ctx context.Context, t Target, o writeamp.Options) (writeamp.Result, error) {
	root, f, err := t.mapFS(ctx, "bench_writeamp")
	if err != nil {
		return writeamp.Result{}, err
	}
	defer root.Close()
	return writeamp.Run(ctx, f, o)
}
