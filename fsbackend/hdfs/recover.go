package hdfs

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// recoverWait bounds how long Recover waits for the NameNode to close a
// file by lease recovery: the primary DataNode gets the recovery command
// with its next heartbeat (dfs.heartbeat.interval, 3 s by default) and
// then reports the block's agreed length.
const recoverWait = 2 * time.Minute

// recoverPoll is the first wait between recoverLease calls; it doubles up
// to a second.
const recoverPoll = 50 * time.Millisecond

var _ fsbackend.Recoverer = (*FS)(nil)

// Recover implements fsbackend.Recoverer with the NameNode's recoverLease
// (the client's Client.RecoverLease, a patch in third_party/colinmarc-hdfs):
// a file under construction whose writer died is closed by block recovery,
// with the length the DataNodes agree on, which holds every byte the
// writer synced. A writer still alive loses the lease and fails its next
// Sync or Close. Recover asks again, with backoff, until the file is
// closed, ctx ends or two minutes passed.
func (f *FS) Recover(ctx context.Context, name string) error {
	if err := fsbackend.ValidName(name); err != nil {
		return err
	}
	p := hpath(name)
	deadline := time.Now().Add(recoverWait)
	wait := recoverPoll
	for {
		var closed bool
		err := f.do(ctx, "recoverLease", p, func(c *client) error {
			var err error
			closed, err = c.c.RecoverLease(p)
			return err
		})
		if err != nil || closed {
			return err
		}
		if time.Now().After(deadline) {
			return &fs.PathError{Op: "recoverLease", Path: p, Err: fmt.Errorf("stowage/fsbackend/hdfs: lease recovery did not close the file within %v", recoverWait)}
		}
		if err := sleep(ctx, wait); err != nil {
			return &fs.PathError{Op: "recoverLease", Path: p, Err: err}
		}
		wait = min(2*wait, time.Second)
	}
}
