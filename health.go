package stowage

import (
	"context"

	"github.com/stowage/stowage/internal/dmap"
)

// MapInfo describes a map as this member holds it.
type MapInfo struct {
	Name      string `json:"name"`
	Size      int    `json:"size"` // entries in the partitions this member owns (Map.Size counts all)
	Backups   int    `json:"backup_entries"`
	Loaded    bool   `json:"loaded"`
	Persisted bool   `json:"persisted"`
	// OwnedPartitions is how many partitions this member owns, and
	// LoadedPartitions how many of those hold the map's data (read from
	// its store, taken over, or new). An EAGER map loads every owned
	// partition at start; a LAZY one loads a partition on its first use,
	// so LoadedPartitions counts the partitions used since.
	OwnedPartitions  int `json:"owned_partitions"`
	LoadedPartitions int `json:"loaded_partitions"`
	// Write-behind maps: WriteBehindQueued is how many records this
	// member's queue holds, not yet stored; UnstoredKeys how many keys of
	// its copies (owned and backed up) have a write it has not seen
	// stored (a new owner stores those).
	WriteBehindQueued int `json:"write_behind_queued,omitempty"`
	UnstoredKeys      int `json:"unstored_keys,omitempty"`
}

// ClusterInfo describes the cluster as this member sees it.
type ClusterInfo struct {
	ClusterName         string         `json:"cluster_name"`
	Self                string         `json:"self"`
	Members             []string       `json:"members"`
	Master              string         `json:"master"`
	PartitionCount      int            `json:"partition_count"`
	PartitionTableVer   int64          `json:"partition_table_version"`
	PartitionsPerMember map[string]int `json:"partitions_per_member"`
	BackupsPerMember    map[string]int `json:"backups_per_member"`
	ReplicaCount        int            `json:"replica_count"`
	Loaded              bool           `json:"loaded"`
	Loading             string         `json:"loading,omitempty"`
	// Safe: loaded, and every partition's backups are filled.
	Safe bool `json:"safe"`
}

// Loaded reports whether the cluster's maps are loaded: this member and
// every other live member serve the partitions the table gives them.
func (n *Node) Loaded() bool { return n.e.Loaded() }

// LoadState is Loaded with the reason when it is false: the first
// partition, map or member found still loading.
func (n *Node) LoadState(ctx context.Context) (loaded bool, why string) { return n.e.LoadState(ctx) }

// WaitLoaded blocks until this member serves every partition the table
// gives it, with its EAGER maps loaded.
func (n *Node) WaitLoaded(ctx context.Context) error { return n.e.WaitLoaded(ctx) }

// Safe reports whether the cluster is safe, as Hazelcast's
// PartitionService.isClusterSafe: every member is loaded with the same
// table, and every partition's backups are filled, so that losing any
// backup-count members loses nothing. A rolling restart waits for it
// before stopping the next member.
func (n *Node) Safe(ctx context.Context) bool { return n.e.Safe(ctx) }

// SafeWhy says why the cluster is not safe ("" when it is).
func (n *Node) SafeWhy() string { return n.e.SafeWhy() }

// MapInfo describes the named map as this member holds it; false when
// the map is not held here.
func (n *Node) MapInfo(name string) (MapInfo, bool) {
	mi, ok := n.e.MapInfo(name)
	return MapInfo(mi), ok
}

// Maps describes the maps this member holds.
func (n *Node) Maps() []MapInfo {
	var out []MapInfo
	for _, mi := range n.e.Maps() {
		out = append(out, MapInfo(mi))
	}
	return out
}

// Cluster describes the cluster: members (oldest first), master, the
// partition table's version and each member's partitions.
func (n *Node) Cluster(ctx context.Context) ClusterInfo {
	ci := ClusterInfo(n.e.Cluster(ctx))
	ci.ClusterName = n.cfg.Hazelcast.ClusterName
	return ci
}

// Owner returns the member id owning partition p in this member's
// current table ("" before the first table).
func (n *Node) Owner(p int) string { return n.e.Owner(p) }

// Replicas returns the member ids of partition p's replica set in this
// member's current table: the owner first, then the backups in order (nil
// before the first table).
func (n *Node) Replicas(p int) []string { return n.e.Replicas(p) }

var (
	_ = MapInfo(dmap.MapInfo{})
	_ = ClusterInfo(dmap.ClusterInfo{})
)
