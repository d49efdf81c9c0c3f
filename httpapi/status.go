package httpapi

import (
	"context"
	"math"
	"net/http"
	"sort"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/serde"
)

// Status is GET /v1/status: what the status page shows, as this member
// sees it. A value this member cannot know (yet) is null, never a guess.
type Status struct {
	Now               time.Time            `json:"now"`
	ClusterName       string               `json:"cluster_name"`
	Self              string               `json:"self"`
	Master            string               `json:"master"`
	PartitionCount    int                  `json:"partition_count"`
	PartitionTableVer int64                `json:"partition_table_version"`
	ReplicaCount      int                  `json:"replica_count"`
	Loaded            bool                 `json:"loaded"`
	Loading           string               `json:"loading,omitempty"`
	Safe              bool                 `json:"safe"`
	SafeWhy           string               `json:"safe_why,omitempty"`
	Members           []stowage.MemberInfo `json:"members"`
	// Owners holds each partition's owner ("" for none; empty before the
	// first table).
	Owners []string `json:"owners"`
	// Replicas holds each partition's replica set, owner first; Away
	// and AwaySince the slots held for members away and since when each
	// is gone (stowage.PartitionTable), omitted when none is.
	Replicas    [][]string           `json:"replicas"`
	Away        [][]string           `json:"away,omitempty"`
	AwaySince   map[string]time.Time `json:"away_since,omitempty"`
	Maps        []MapStatus          `json:"maps"`
	Checkpoints *CheckpointStatus    `json:"checkpoints"` // null: no checkpoint storage given to the handler
	TakeOvers   []stowage.TakeOver   `json:"take_overs"`
	// ClusterTakeOvers is every live member's take-overs, newest first,
	// and the members that did not answer in time.
	ClusterTakeOvers stowage.ClusterTakeOvers `json:"cluster_take_overs"`
}

// MapStatus is one map of Status.
type MapStatus struct {
	stowage.MapInfo
	// Entries counts the whole map, every member's partitions (null when
	// the members did not answer in time).
	Entries *int `json:"entries"`
	// StoreLatency is the write-through latency since this member started
	// (null before its first write, or without this node's registry).
	StoreLatency *Latency `json:"store_latency"`
	// Disk is what the map's store keeps on storage (null: memory only,
	// or a store that cannot tell from a listing).
	Disk *stowage.DiskUsage `json:"disk"`
	// LiveBytes is the bytes of the map's keys and values over every
	// owner, counted at most every few seconds (null when the members did
	// not answer in time).
	LiveBytes *int64 `json:"live_bytes"`
	// DiskPerLive is Disk.DiskBytes / LiveBytes: how much the store keeps
	// per byte of live data (null without both, or with no live byte).
	DiskPerLive *float64 `json:"disk_per_live"`
	// DiskError says the listing failed (its reason is in the member's
	// log, not here: it names paths on the server).
	DiskError string `json:"disk_error,omitempty"`
}

// Latency is quantiles estimated from a Prometheus histogram.
type Latency struct {
	Count      uint64  `json:"count"`
	P50Seconds float64 `json:"p50_seconds"`
	P99Seconds float64 `json:"p99_seconds"`
}

// CheckpointStatus is the checkpoint storage's jobs.
type CheckpointStatus struct {
	Jobs  []checkpoint.JobSummary `json:"jobs"` // null when Error is set
	Error string                  `json:"error,omitempty"`
}

func (a *api) status(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	n := a.n
	ci := n.Cluster(ctx)
	st := Status{Now: time.Now().UTC(), ClusterName: ci.ClusterName, Self: ci.Self, Master: ci.Master,
		PartitionCount: ci.PartitionCount, PartitionTableVer: ci.PartitionTableVer, ReplicaCount: ci.ReplicaCount,
		Loaded: ci.Loaded, Loading: ci.Loading, Safe: ci.Safe, Members: n.Members(), Owners: []string{},
		Maps: []MapStatus{}, TakeOvers: n.TakeOvers()}
	if !st.Safe {
		st.SafeWhy = n.SafeWhy()
	}
	if st.Members == nil {
		st.Members = []stowage.MemberInfo{}
	}
	if st.TakeOvers == nil {
		st.TakeOvers = []stowage.TakeOver{}
	}
	st.ClusterTakeOvers = n.ClusterTakeOvers(ctx)
	pt := n.PartitionTable()
	st.Replicas, st.Away, st.AwaySince = pt.Replicas, pt.Away, pt.AwaySince
	if st.Replicas == nil {
		st.Replicas = [][]string{}
	}
	for _, rs := range pt.Replicas {
		owner := ""
		if len(rs) > 0 {
			owner = rs[0]
		}
		st.Owners = append(st.Owners, owner)
	}
	lat := a.latencies()
	infos := n.Maps()
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	for _, mi := range infos {
		ms := MapStatus{MapInfo: mi, StoreLatency: lat[mi.Name]}
		if m, err := stowage.LookupMap(n, mi.Name, serde.String(), serde.Bytes()); err == nil {
			sctx, scancel := context.WithTimeout(ctx, time.Second)
			if size, err := m.Size(sctx); err == nil {
				ms.Entries = &size
			}
			scancel()
		}
		lctx, lcancel := context.WithTimeout(ctx, time.Second)
		if live, _, err := n.MapLiveBytes(lctx, mi.Name); err == nil {
			ms.LiveBytes = &live
		}
		lcancel()
		if mi.Persisted {
			du, ok, err := n.MapDiskUsage(ctx, mi.Name)
			switch {
			case err != nil:
				ms.DiskError = "the map store's storage could not be listed"
			case ok:
				ms.Disk = &du
				if ms.LiveBytes != nil && *ms.LiveBytes > 0 {
					r := float64(du.DiskBytes) / float64(*ms.LiveBytes)
					ms.DiskPerLive = &r
				}
			}
		}
		st.Maps = append(st.Maps, ms)
	}
	if a.checkpoints != nil {
		st.Checkpoints = &CheckpointStatus{}
		if jl, ok := a.checkpoints.(checkpoint.JobLister); !ok {
			st.Checkpoints.Error = "this checkpoint storage cannot list its jobs"
		} else if jobs, err := jl.Jobs(ctx); err != nil {
			st.Checkpoints.Error = "the checkpoint storage could not be listed"
		} else {
			st.Checkpoints.Jobs = jobs
			if jobs == nil {
				st.Checkpoints.Jobs = []checkpoint.JobSummary{}
			}
		}
	}
	writeJSON(w, http.StatusOK, st)
}

// latencies estimates each map's store latency quantiles from this
// node's registry (stowage_store_latency_seconds, by map).
func (a *api) latencies() map[string]*Latency {
	out := map[string]*Latency{}
	g := a.n.Gatherer()
	if g == nil {
		return out
	}
	mfs, err := g.Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() != "stowage_store_latency_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			h := m.GetHistogram()
			if h == nil || h.GetSampleCount() == 0 {
				continue
			}
			name := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "map" {
					name = l.GetValue()
				}
			}
			out[name] = &Latency{Count: h.GetSampleCount(), P50Seconds: quantile(h, 0.5), P99Seconds: quantile(h, 0.99)}
		}
	}
	return out
}

// quantile estimates the q-quantile of h as Prometheus'
// histogram_quantile does: linearly within the bucket it falls in, and
// the highest finite bound when it falls in the +Inf bucket.
func quantile(h *dto.Histogram, q float64) float64 {
	total := float64(h.GetSampleCount())
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range h.GetBucket() {
		upper, cum := b.GetUpperBound(), float64(b.GetCumulativeCount())
		if math.IsInf(upper, 1) {
			return lower
		}
		if cum >= rank {
			in := cum - below
			if in == 0 {
				return upper
			}
			return lower + (upper-lower)*(rank-below)/in
		}
		lower, below = upper, cum
	}
	return lower
}
