package cluster

import (
	"slices"
	"sync"
)

// View is what the data layer needs of membership: who this member is,
// who the live members are (oldest first: the first is the master), and a
// way to learn of the next change. *Cluster implements it on memberlist;
// StaticView is its scriptable twin for deterministic tests.
type View interface {
	Self() Member
	Members() []Member
	Changed() <-chan struct{}
}

var (
	_ View = (*Cluster)(nil)
	_ View = (*StaticView)(nil)
)

// StaticView is a View whose members a test sets. Each member of a test
// cluster has its own StaticView, so members can disagree, as they do
// while failure detection runs. It is safe for concurrent use.
type StaticView struct {
	self    Member
	mu      sync.Mutex
	members []Member
	changed chan struct{}
}

// NewStaticView returns a view of a cluster of one: self.
func NewStaticView(self Member) *StaticView {
	return &StaticView{self: self, members: []Member{self}, changed: make(chan struct{})}
}

// Self implements View.
func (v *StaticView) Self() Member { return v.self }

// Members implements View; the caller owns the returned slice.
func (v *StaticView) Members() []Member {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.members)
}

// Changed implements View.
func (v *StaticView) Changed() <-chan struct{} {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.changed
}

// Set replaces the live members (oldest first) and wakes the waiters of
// Changed.
func (v *StaticView) Set(members ...Member) {
	v.mu.Lock()
	v.members = slices.Clone(members)
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}
