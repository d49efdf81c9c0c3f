package boltstore

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// committer is the group commit of one file: writers queue their
// functions, and one of them, the leader, runs everything queued in one
// read-write transaction while the next writers queue up behind it. When
// the commit is on disk the leader hands the lead to the first writer
// queued meanwhile. There is no fixed delay: a lone writer waits for one
// fdatasync, and under load a commit holds whatever arrived during the
// previous one. (bbolt's DB.Batch instead waits MaxBatchDelay before each
// batch and lets batches pile up behind the writer lock, each paying its
// own fdatasync.)
type committer struct {
	db    *bolt.DB
	mu    sync.Mutex
	queue []*commitReq
	busy  bool // a leader is running
}

type commitReq struct {
	fn   func(*bolt.Tx) error
	err  error
	done chan struct{} // closed once err is set
	lead chan struct{} // told when this request's writer becomes the leader
}

// commit runs fn in a read-write transaction, possibly shared with other
// writers, and returns once that transaction committed (or failed). If a
// shared transaction fails, each of its functions is run again alone, so
// one failing function fails only its own writer: fn must give the same
// result when run twice.
func (c *committer) commit(fn func(*bolt.Tx) error) error {
	r := &commitReq{fn: fn, done: make(chan struct{}), lead: make(chan struct{}, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, r)
	if c.busy {
		c.mu.Unlock()
		select {
		case <-r.done:
			return r.err
		case <-r.lead:
		}
	} else {
		c.busy = true
		c.mu.Unlock()
	}
	c.lead()
	<-r.done
	return r.err
}

// lead commits everything queued, then passes the lead on.
func (c *committer) lead() {
	c.mu.Lock()
	batch := c.queue
	c.queue = nil
	c.mu.Unlock()

	err := c.db.Update(func(tx *bolt.Tx) error {
		for _, r := range batch {
			if err := r.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil && len(batch) > 1 {
		for _, r := range batch {
			r.err = c.db.Update(r.fn)
		}
	} else {
		for _, r := range batch {
			r.err = err
		}
	}
	for _, r := range batch {
		close(r.done)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.busy = false
		return
	}
	c.queue[0].lead <- struct{}{}
}
