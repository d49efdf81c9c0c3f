package stowage

import (
	"sync"

	"github.com/stowage/stowage/cluster"
)

// liveRuns is the set of the live members' runs, made again only once
// the view changed: a map store's compaction asks for every run that
// left files in shared storage, about one per member, and a copy of the
// member list for each made that O(N²) per compaction on every member.
type liveRuns struct {
	mu      sync.Mutex
	runs    map[string]bool
	changed <-chan struct{} // closed once runs is out of date
}

func (l *liveRuns) has(v cluster.View, run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	stale := l.runs == nil
	if !stale {
		select {
		case <-l.changed:
			stale = true
		default:
		}
	}
	if stale {
		// The channel first: a change after it was taken closes it, and
		// the next call reads the members again.
		l.changed = v.Changed()
		ms := v.Members()
		l.runs = make(map[string]bool, len(ms))
		for _, m := range ms {
			l.runs[m.Run] = true
		}
	}
	return l.runs[run]
}
