package checkpoint

import (
	"context"
	"errors"

	"github.com/stowage/stowage/fsbackend"
)

// reapQueue is how many files may wait for the background deletion before
// a store deletes them itself.
const reapQueue = 256

// reapLater has files that are no longer checkpoints (retired ones,
// leftovers of interrupted writes) deleted in the background where syncs
// are deferred: on the local disk deleting a file frees its space, which
// costs more than the rest of a store's metadata work, and nothing needs
// it done before the store returns. Elsewhere, when the queue is full or
// after Close, it deletes them at once.
func (s *FileStorage) reapLater(names []string) {
	if len(names) == 0 {
		return
	}
	s.reapMu.Lock()
	defer s.reapMu.Unlock()
	for i, n := range names {
		if !s.deferred || s.reapClosed {
			s.remove(context.Background(), names[i:], "deleting a leftover file failed")
			return
		}
		select {
		case s.reap <- n:
		default:
			s.remove(context.Background(), names[i:], "deleting a leftover file failed")
			return
		}
	}
}

// reaper deletes what reapLater queued, until Close.
func (s *FileStorage) reaper() {
	defer s.reapers.Done()
	for n := range s.reap {
		if err := s.dfs.Remove(context.Background(), n); err != nil && !errors.Is(err, fsbackend.ErrNotExist) {
			s.log.Warn("stowage/checkpoint: deleting a leftover file failed", "file", s.ns+n, "error", err)
		}
	}
}

// stopReaper lets the reaper finish what is queued and waits for it.
func (s *FileStorage) stopReaper() {
	s.reapMu.Lock()
	if !s.reapClosed {
		s.reapClosed = true
		close(s.reap)
	}
	s.reapMu.Unlock()
	s.reapers.Wait()
}
