// Package checkpointtest is the scenario suite that every checkpoint
// storage back end runs: Run(t, newFS) drives a checkpoint.FileStorage on a
// fresh fsbackend.FS through SeaTunnel's own checkpoint storage scenario
// and through stowage's guarantees (latest by id, exact retention across
// reopen, fallback from a damaged latest checkpoint, idempotent re-store,
// job id checks, asynchronous stores under a full queue).
//
// A back end's test calls it with a constructor of empty file systems:
//
//	func TestCheckpoints(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) fsbackend.FS { return newEmptyFS(t) })
//	}
//
// The suite writes below the namespace "/checkpointtest/" of each FS and
// closes every Storage it opens; it does not close the FS.
package checkpointtest
