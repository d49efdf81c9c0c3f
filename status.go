package stowage

import (
	"context"
	"sort"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/mapstore"
)

// MemberInfo describes one member as this member sees it.
type MemberInfo struct {
	ID      string    `json:"id"`
	Addr    string    `json:"addr"` // host:port of membership
	Started time.Time `json:"started,omitzero"`
	Master  bool      `json:"master"`
	Self    bool      `json:"self"`
	// Live: in this member's membership list. A member the partition
	// table still names but membership no longer lists (failure detection
	// declared it dead, or it left) is listed with Live false until a new
	// table leaves it out.
	Live bool `json:"live"`
	// Suspect: live, but this member's failure detection got no answer
	// from it at its last probe; it is declared dead unless it answers in
	// time.
	Suspect bool `json:"suspect"`
	// Draining: handing its partitions over before it leaves.
	Draining bool `json:"draining"`
	// Partitions it owns and Backups it holds per this member's table.
	Partitions int `json:"partitions"`
	Backups    int `json:"backups"`
}

// Members describes the live members (the master first, in the order
// the masters admitted them),
// then the members the partition table names that are no longer live.
func (n *Node) Members() []MemberInfo {
	_, owners := n.e.Table()
	parts, backups := map[string]int{}, map[string]int{}
	var named []string
	for _, rs := range owners {
		for i, id := range rs {
			if parts[id] == 0 && backups[id] == 0 {
				named = append(named, id)
			}
			if i == 0 {
				parts[id]++
			} else {
				backups[id]++
			}
		}
	}
	self := n.view.Self().ID
	var out []MemberInfo
	live := map[string]bool{}
	for i, m := range n.e.Members() {
		live[m.ID] = true
		out = append(out, MemberInfo{ID: m.ID, Addr: m.Addr, Started: m.Started, Master: i == 0, Self: m.ID == self,
			Live: true, Suspect: m.Suspect, Draining: m.Draining, Partitions: parts[m.ID], Backups: backups[m.ID]})
	}
	for _, id := range named {
		if !live[id] {
			out = append(out, MemberInfo{ID: id, Addr: addrOfID(id), Partitions: parts[id], Backups: backups[id]})
		}
	}
	return out
}

// addrOfID is the host:port of a member id ("host:port-<start nanos>").
func addrOfID(id string) string {
	for i := len(id) - 1; i >= 0; i-- {
		if id[i] == '-' {
			return id[:i]
		}
	}
	return id
}

// PartitionTable is this member's current partition table.
type PartitionTable struct {
	Version int64 `json:"version"`
	// Replicas holds each partition's replica set: the owner first, then
	// its backups in order. Empty before the first table.
	Replicas [][]string `json:"replicas"`
	// Away holds, per partition, the members that left without a
	// graceful leave and whose replica slot is held for their return
	// (Options.BackupGrace); omitted when none is.
	Away [][]string `json:"away,omitempty"`
	// AwaySince is, per member of Away, since when it is gone (the wall
	// clock of the master that first saw it gone); its slots are given
	// to the others once the grace has run from then.
	AwaySince map[string]time.Time `json:"away_since,omitempty"`
}

// PartitionTable returns a copy of this member's current partition table.
func (n *Node) PartitionTable() PartitionTable {
	v, owners := n.e.Table()
	return PartitionTable{Version: v, Replicas: owners, Away: n.e.TableAway(), AwaySince: n.e.TableAwaySince()}
}

// TakeOver is one batch of partitions this member took ownership of
// together from one source: "promotion" (a fail-over to a backup's copy),
// "handover" (a migration from the previous owner) or "store" (read from
// the map stores: a start, or a fail-over with no copy left).
type TakeOver struct {
	At           time.Time `json:"at"`
	Source       string    `json:"source"`
	From         string    `json:"from,omitempty"` // the member whose copy was taken
	Partitions   int       `json:"partitions"`
	TableVersion int64     `json:"partition_table_version"`
}

// TakeOvers returns this member's last take-overs (at most 32), oldest
// first. Metrics count them too: stowage_partitions_acquired_total.
func (n *Node) TakeOvers() []TakeOver {
	var out []TakeOver
	for _, t := range n.e.TakeOvers() {
		out = append(out, TakeOver(t))
	}
	return out
}

// MemberTakeOver is a take-over with the member that made it.
type MemberTakeOver struct {
	Member string `json:"member"`
	TakeOver
}

// ClusterTakeOvers is every live member's last take-overs.
type ClusterTakeOvers struct {
	// TakeOvers is the members' take-overs merged, newest first.
	TakeOvers []MemberTakeOver `json:"take_overs"`
	// Unanswered names the members that did not answer in time (about a
	// second each): their take-overs are missing from TakeOvers.
	Unanswered []string `json:"unanswered"`
}

// ClusterTakeOvers asks every live member, this one included, for its
// last take-overs (at most 32 each), all at once, each bounded to about a
// second. A member that does not answer is named in Unanswered; it is
// never an error.
func (n *Node) ClusterTakeOvers(ctx context.Context) ClusterTakeOvers {
	out := ClusterTakeOvers{TakeOvers: []MemberTakeOver{}, Unanswered: []string{}}
	for _, a := range n.e.ClusterTakeOvers(ctx) {
		if a.Err != nil {
			n.log.Debug("stowage: take-overs of a member not answered", "member", a.Member, "err", a.Err)
			out.Unanswered = append(out.Unanswered, a.Member)
			continue
		}
		for _, t := range a.TakeOvers {
			out.TakeOvers = append(out.TakeOvers, MemberTakeOver{Member: a.Member, TakeOver: TakeOver(t)})
		}
	}
	sort.SliceStable(out.TakeOvers, func(i, j int) bool { return out.TakeOvers[i].At.After(out.TakeOvers[j].At) })
	return out
}

// DiskUsage is what a map's store keeps on storage (every partition's
// files, whichever member owns them).
type DiskUsage struct {
	LogFiles      int   `json:"log_files"`
	LogBytes      int64 `json:"log_bytes"`
	Snapshots     int   `json:"snapshots"`
	SnapshotBytes int64 `json:"snapshot_bytes"`
	OtherFiles    int   `json:"other_files"`
	DiskBytes     int64 `json:"disk_bytes"`
}

// MapDiskUsage lists the named map's store and says what it keeps on
// storage. ok is false when the map is not held here, is not persisted,
// or its store cannot tell without reading its files (bbolt).
func (n *Node) MapDiskUsage(ctx context.Context, name string) (du DiskUsage, ok bool, err error) {
	u, _, known, err := n.e.DiskUsage(ctx, name)
	if err != nil || !known {
		return DiskUsage{}, false, err
	}
	return DiskUsage(u), true, nil
}

var (
	_ = TakeOver(backup.TakeOver{})
	_ = DiskUsage(mapstore.DiskUsage{})
)
