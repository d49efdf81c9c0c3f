package filestore

import (
	"context"
)

// On HDFS and object stores, where every read is a round trip, a store
// reads each partition's newest snapshot ahead, in the background from
// Open on, many at once, so that the partitions' loads (which a member
// runs a few at a time) find them read. Open itself does not wait for
// them. A load that comes before its snapshot's read started reads it
// itself; one that comes while it is read waits for that read.

// prefetch states of a partition's newest snapshot.
const (
	preQueued  = iota // not started
	preRunning        // being read
	preDone           // read: see read
	preDropped        // taken by a load before it started, or released
)

// preSnap is a partition's newest snapshot being read ahead.
type preSnap struct {
	state int           // s.mu guards it
	done  chan struct{} // closed once read is set (preDone)
	read  *snapRead     // nil if it could not be read
}

// startPrefetch starts reading every partition's newest snapshot in the
// background, on back ends where a read is a round trip. ctx ends it (at
// Close); s.done counts it.
func (s *Store) startPrefetch(ctx context.Context) {
	s.pre = make([]*preSnap, s.parts)
	if s.fs.Capabilities().DurableAppend {
		return // local disk: a read is work for the processor, not a wait
	}
	var jobs []readJob
	s.mu.Lock()
	for p, sn := range s.snaps {
		if len(sn) == 0 {
			continue
		}
		sf, ps := sn[len(sn)-1], &preSnap{done: make(chan struct{})}
		s.pre[p] = ps
		jobs = append(jobs, readJob{size: sf.bytes, read: func() error {
			s.mu.Lock()
			if ps.state != preQueued || ctx.Err() != nil {
				s.mu.Unlock()
				return nil
			}
			ps.state = preRunning
			s.mu.Unlock()
			var sr *snapRead
			if buf, n, err := s.readSnapshot(ctx, sf.name, p); buf != nil {
				sr = &snapRead{name: sf.name, buf: buf, n: n, err: err}
			}
			s.mu.Lock()
			ps.read, ps.state = sr, preDone
			s.mu.Unlock()
			close(ps.done)
			return nil
		}})
	}
	s.mu.Unlock()
	if len(jobs) == 0 {
		return
	}
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		_ = s.readAll(ctx, jobs) // jobs report nothing
	}()
}

// takePre takes partition p's snapshot read ahead, if any: what was read,
// or the channel to wait on while it is read. s.mu held.
func (s *Store) takePre(p int) (read *snapRead, wait *preSnap) {
	ps := s.pre[p]
	if ps == nil {
		return nil, nil
	}
	s.pre[p] = nil
	switch ps.state {
	case preQueued:
		ps.state = preDropped
	case preRunning:
		return nil, ps
	case preDone:
		return ps.read, nil
	}
	return nil, nil
}

// dropPre forgets partition p's snapshot read ahead. s.mu held.
func (s *Store) dropPre(p int) {
	if s.pre != nil {
		s.takePre(p)
	}
}
