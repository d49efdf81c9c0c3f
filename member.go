package stowage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/mapstore/filestore"
)

// Hazelcast properties (hazelcast.yaml `properties:`) the node reads.
const (
	propInitialMin = "hazelcast.initial.min.cluster.size"
	// propLocalAddress is Hazelcast's property for the address a member
	// binds and advertises.
	propLocalAddress = "hazelcast.local.localAddress"
	// propTransportPort is the port of the member-to-member transport
	// (operations, backups, migration); 0 or unset picks a free one,
	// announced to the others through membership.
	propTransportPort = "stowage.transport.port"
)

// joinCluster starts membership and the transport as the configuration
// asks (or takes them from Options), and names this member's run.
func (n *Node) joinCluster(ctx context.Context) (cluster.View, cluster.Transport, error) {
	run := filestore.NewRunID()
	if n.opts.View != nil && n.opts.Transport != nil {
		n.tr = n.opts.Transport
		return n.opts.View, n.opts.Transport, nil
	}
	nw := n.cfg.Hazelcast.Network
	if !nw.TCPIPEnabled {
		return cluster.NewStaticView(cluster.Member{ID: "local-" + run, Run: run, Started: time.Now()}), nil, nil
	}
	host := n.bindHost()
	tport := 0
	if v := n.cfg.Hazelcast.Properties[propTransportPort]; v != "" {
		p, err := strconv.Atoi(v)
		if err != nil || p < 0 || p > 65535 {
			return nil, nil, fmt.Errorf("stowage: hazelcast.properties.%s: %q is not a port", propTransportPort, v)
		}
		tport = p
	}
	tr, err := cluster.ListenTCP(net.JoinHostPort(host, strconv.Itoa(tport)), cluster.TCPOptions{Logger: n.log})
	if err != nil {
		return nil, nil, fmt.Errorf("stowage: member transport: %w", err)
	}
	clu, err := cluster.Join(ctx, cluster.Config{
		ClusterName: n.cfg.Hazelcast.ClusterName, BindAddr: host, Port: nw.Port,
		PortAutoIncrement: nw.PortAutoIncrement, PortCount: nw.PortCount, MemberList: nw.MemberList,
		RPCAddr: tr.Addr(), Run: run, Logger: n.log, Timing: n.opts.Timing,
	})
	if err != nil {
		tr.Close()
		return nil, nil, err
	}
	n.clu, n.tr, n.ownT = clu, tr, true
	return clu, tr, nil
}

// bindHost is the address this member listens and is reached at:
// network.public-address, else hazelcast.local.localAddress, else
// 127.0.0.1 when every member-list entry is a loopback address, else the
// host's first non-loopback IPv4 address.
func (n *Node) bindHost() string {
	h := n.cfg.Hazelcast
	if a := h.Network.PublicAddress; a != "" {
		if host, _, err := net.SplitHostPort(a); err == nil {
			return host
		}
		return a
	}
	if a := h.Properties[propLocalAddress]; a != "" {
		return a
	}
	loopback := true
	for _, e := range h.Network.MemberList {
		host := e
		if hh, _, err := net.SplitHostPort(e); err == nil {
			host = hh
		}
		if ip := net.ParseIP(host); (ip == nil || !ip.IsLoopback()) && host != "localhost" {
			loopback = false
		}
	}
	if loopback {
		return "127.0.0.1"
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	return "127.0.0.1"
}

type clusterSettings struct {
	replicas, startMin int
}

// clusterConfig derives the table's replica-set size (owner plus the
// most backups any map asks for), the members needed before the first
// table (hazelcast.initial.min.cluster.size).
func (n *Node) clusterConfig() clusterSettings {
	h := n.cfg.Hazelcast
	b := n.cfg.Engine.BackupCount
	for _, mc := range h.Maps {
		b = max(b, mc.SyncBackups(n.cfg.Engine.BackupCount)+mc.AsyncBackupCount)
	}
	b = min(b, config.MaxBackupCount)
	start := 1
	if v, err := strconv.Atoi(h.Properties[propInitialMin]); err == nil && v > 0 {
		start = v
	}
	return clusterSettings{replicas: b + 1, startMin: start}
}

// backupCounts returns a map's synchronous and asynchronous backups.
func (n *Node) backupCounts(name string) (int, int) {
	mc, _ := n.cfg.Hazelcast.MapFor(name)
	return mc.SyncBackups(n.cfg.Engine.BackupCount), mc.AsyncBackupCount
}

// quorumOf returns the split-brain protection of a map: the minimum
// cluster size for writes and for reads (0: none).
func (n *Node) quorumOf(name string) (writes, reads int) {
	mc, _ := n.cfg.Hazelcast.MapFor(name)
	sb, ok := n.cfg.Hazelcast.SplitBrainProtection[mc.SplitBrainProtectionRef]
	if !ok || !sb.Enabled {
		return 0, 0
	}
	switch sb.ProtectOn {
	case "READ":
		return 0, sb.MinimumClusterSize
	case "WRITE":
		return sb.MinimumClusterSize, 0
	}
	return sb.MinimumClusterSize, sb.MinimumClusterSize
}

// runID is this member run's name in shared storage.
func (n *Node) runID() string { return n.d.view.Self().Run }

// runIsLive reports whether a member run still writes to shared storage:
// it belongs to a live member.
func (n *Node) runIsLive(run string) bool {
	if run == n.runID() {
		return true
	}
	for _, m := range n.d.view.Members() {
		if m.Run == run {
			return true
		}
	}
	return false
}

// storeLiveness is the map stores' IsLive: nil for a member alone (no
// other run can be writing), else runIsLive.
func (n *Node) storeLiveness() func(string) bool {
	if n.d.tr == nil {
		return nil
	}
	return n.runIsLive
}

// allCores returns every map this member holds.
func (n *Node) allCores() []*core {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*core, 0, len(n.maps))
	for _, c := range n.maps {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// partData collects partition p of every map: those ready (owner) or
// filled (backup) here.
func (n *Node) partData(p int, owner bool, cores []*core) partData {
	return n.partDataFor(p, owner, cores, 0)
}

// partDataFor is partData for the backup at place pos (1-based) in p's
// replica set: only the maps that keep that many backups (0: all).
func (n *Node) partDataFor(p int, owner bool, cores []*core, pos int) partData {
	pd := partData{P: p}
	for _, c := range cores {
		if pos > 0 && pos > c.sync+c.async {
			continue
		}
		pt := c.parts[p]
		pt.mu.Lock()
		ok := pt.ready || pt.loaded
		if !owner {
			ok = pt.filled
		}
		pt.mu.Unlock()
		if ok {
			pd.Maps = append(pd.Maps, c.export(pt, owner))
		}
	}
	return pd
}

// seqSum is the sum of partition p's last seqs over the maps: a measure
// of how far a holder's copy got, to choose between equal epochs.
func (n *Node) seqSum(p int) uint64 {
	var s uint64
	for _, c := range n.allCores() {
		pt := c.parts[p]
		pt.mu.Lock()
		s += pt.ver.Seq
		pt.mu.Unlock()
	}
	return s
}

// dropPartition forgets what this member holds of partition p.
func (n *Node) dropPartition(p int) {
	for _, c := range n.allCores() {
		c.clearPart(c.parts[p])
	}
}

// releaseStores tells the map stores this member no longer owns p.
func (n *Node) releaseStores(p int) {
	for _, c := range n.allCores() {
		if o, ok := c.store.(ownership); ok {
			o.Release(p)
		}
	}
}

// parallel runs fn(0..n-1) on LoadWorkers goroutines.
func (n *Node) parallel(count int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n.opts.LoadWorkers, count); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < count; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// localLoaded reports whether this member serves every partition the
// table gives it, with every EAGER map loaded.
func (n *Node) localLoaded() (bool, string) {
	t, _ := n.d.currentTable()
	if t == nil {
		return false, fmt.Sprintf("waiting for %d members (%s)", n.d.startMin, propInitialMin)
	}
	cores := n.allCores()
	for p, rs := range t.Owners {
		if len(rs) == 0 || rs[0] != n.d.self {
			continue
		}
		s := n.d.slots[p]
		s.mu.Lock()
		st := s.st
		s.mu.Unlock()
		if st != stActive {
			return false, fmt.Sprintf("partition %d is %s", p, st)
		}
		for _, c := range cores {
			if c.store == nil || c.lazy {
				continue
			}
			pt := c.parts[p]
			pt.mu.Lock()
			ready := pt.ready
			pt.mu.Unlock()
			if !ready {
				return false, fmt.Sprintf("map %q partition %d is loading", c.name, p)
			}
		}
	}
	return true, ""
}

// Loaded reports whether the cluster's maps are loaded: this member and
// every other live member serve the partitions the table gives them.
func (n *Node) Loaded() bool {
	ok, _ := n.loadedWhy(context.Background())
	return ok
}

func (n *Node) loadedWhy(ctx context.Context) (bool, string) {
	if ok, why := n.localLoaded(); !ok {
		return false, why
	}
	return n.everyMember(ctx, func(a healthAns) bool { return a.Loaded })
}

// everyMember asks every other live member for its health and reports
// whether ok holds of each answer, with the same table version as here.
func (n *Node) everyMember(ctx context.Context, ok func(healthAns) bool) (bool, string) {
	if n.d.tr == nil {
		return true, ""
	}
	tv := n.d.tableVersion()
	for _, m := range n.d.refreshMembers() {
		if m.ID == n.d.self {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		b, err := n.d.rpc(cctx, m.RPC, mHealth, nil)
		cancel()
		var ans healthAns
		if err == nil {
			err = dec(b, &ans)
		}
		switch {
		case err != nil:
			return false, fmt.Sprintf("member %s: %v", m.ID, err)
		case !ok(ans) || ans.TV != tv:
			return false, fmt.Sprintf("member %s: loaded %v, safe %v, table %d (here %d): %s", m.ID, ans.Loaded, ans.Safe, ans.TV, tv, ans.Why)
		}
	}
	return true, ""
}

// localSafe reports whether every partition this member owns has each
// backup the table names filled.
func (d *dist) localSafe() bool {
	ok, _ := d.localSafeWhy()
	return ok
}

func (d *dist) localSafeWhy() (bool, string) {
	t, _ := d.currentTable()
	if t == nil {
		return false, "no table"
	}
	for p, rs := range t.Owners {
		if len(rs) == 0 || rs[0] != d.self {
			continue
		}
		s := d.slots[p]
		s.mu.Lock()
		ok := s.st == stActive && slices.Equal(s.backups, rs[1:]) && !s.dirty
		why := fmt.Sprintf("partition %d: %s, backups %v of %v, dirty %v", p, s.st, s.backups, rs[1:], s.dirty)
		s.mu.Unlock()
		if !ok {
			return false, why
		}
	}
	return true, ""
}

// Safe reports whether the cluster is safe, as Hazelcast's
// PartitionService.isClusterSafe: every member is loaded with the same
// table, and every partition's backups are filled, so that losing any
// backup-count members loses nothing. A rolling restart waits for it
// before stopping the next member.
func (n *Node) Safe(ctx context.Context) bool {
	ok, _ := n.safeWhy(ctx)
	return ok
}

func (n *Node) safeWhy(ctx context.Context) (bool, string) {
	if ok, why := n.localLoaded(); !ok {
		return false, why
	}
	if ok, why := n.d.localSafeWhy(); !ok {
		return false, why
	}
	return n.everyMember(ctx, func(a healthAns) bool { return a.Safe })
}

// WaitLoaded blocks until this member serves every partition the table
// gives it, with its EAGER maps loaded.
func (n *Node) WaitLoaded(ctx context.Context) error {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		if ok, _ := n.localLoaded(); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			_, why := n.localLoaded()
			return fmt.Errorf("stowage: not loaded (%s): %w", why, ctx.Err())
		case <-n.ctx.Done():
			return ErrClosed
		case <-t.C:
		}
	}
}

// MapInfo describes a map as this member holds it.
type MapInfo struct {
	Name      string `json:"name"`
	Size      int    `json:"size"` // entries in the partitions this member owns (Map.Size counts all)
	Backups   int    `json:"backup_entries"`
	Loaded    bool   `json:"loaded"`
	Persisted bool   `json:"persisted"`
}

// Maps describes the maps this member holds.
func (n *Node) Maps() []MapInfo {
	var out []MapInfo
	for _, c := range n.allCores() {
		out = append(out, n.mapInfo(c))
	}
	return out
}

func (n *Node) mapInfo(c *core) MapInfo {
	mi := MapInfo{Name: c.name, Persisted: c.store != nil, Loaded: true}
	for p, pt := range c.parts {
		s := n.d.slots[p]
		s.mu.Lock()
		st := s.st
		s.mu.Unlock()
		pt.mu.Lock()
		switch st {
		case stActive:
			mi.Size += len(pt.entries)
			if !pt.ready && !c.lazy {
				mi.Loaded = false
			}
		case stAcquiring:
			mi.Loaded = false
		case stBackup, stHeld:
			mi.Backups += len(pt.entries)
		}
		pt.mu.Unlock()
	}
	return mi
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

// Cluster describes the cluster: members (oldest first), master, the
// partition table's version and each member's partitions.
func (n *Node) Cluster(ctx context.Context) ClusterInfo {
	ci := ClusterInfo{ClusterName: n.cfg.Hazelcast.ClusterName, Self: n.d.self, PartitionCount: n.d.count,
		PartitionsPerMember: map[string]int{}, BackupsPerMember: map[string]int{}, ReplicaCount: n.d.replicas}
	for _, m := range n.d.view.Members() {
		ci.Members = append(ci.Members, m.ID)
	}
	if len(ci.Members) > 0 {
		ci.Master = ci.Members[0]
	}
	if t, _ := n.d.currentTable(); t != nil {
		ci.PartitionTableVer = t.Version
		for _, rs := range t.Owners {
			if len(rs) > 0 {
				ci.PartitionsPerMember[rs[0]]++
			}
			for _, b := range rs[min(1, len(rs)):] {
				ci.BackupsPerMember[b]++
			}
		}
	}
	ci.Loaded, ci.Loading = n.loadedWhy(ctx)
	ci.Safe = ci.Loaded && n.Safe(ctx)
	return ci
}

// probeDir is where members leave a file so that the others can check
// they share the map stores' storage: namespace/clusterName/probeDir/.
const probeDir = ".stowage-members"

// checkShared refuses to run a cluster on map-store storage that the
// members do not share (a local directory on each host, a different
// bucket or namespace): the member writes a file under each map store's
// namespace/clusterName and asks every other member whether it sees it
// there (shared/DESIGN.md §3). A member alone has nothing to check.
func (n *Node) checkShared(ctx context.Context) error {
	if n.d.tr == nil {
		return nil
	}
	var errs []error
	for _, mc := range n.cfg.Hazelcast.Maps {
		ms := mc.MapStore
		if ms == nil || !ms.Enabled {
			continue
		}
		if ms.StoreType() == config.StoreBBolt {
			if n.d.startMin > 1 || len(n.cfg.Hazelcast.Network.MemberList) > 1 {
				errs = append(errs, fmt.Errorf("stowage: hazelcast.map.%s.map-store: type bbolt keeps one member's file; a cluster needs type hdfs on shared storage", mc.Pattern))
			}
			continue
		}
		if err := n.probeStore(ctx, mc.Pattern, ms); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (n *Node) probeStore(ctx context.Context, pattern string, ms *config.MapStoreConfig) error {
	f, err := n.openFS(ctx, ms.Properties)
	if err != nil {
		return fmt.Errorf("stowage: map-store of %q: %w", pattern, err)
	}
	defer f.Close()
	name := fsbackend.Join(mapDir(ms, probeDir), n.runID())
	data := []byte(n.d.self)
	_ = f.Remove(ctx, name)
	if err := fsbackend.WriteFile(ctx, f, name, data); err != nil {
		return fmt.Errorf("stowage: map-store of %q: write %s: %w", pattern, name, err)
	}
	// Probe files of runs that are over go (a run that ends removes its
	// own, one that crashed leaves it).
	if list, err := f.List(ctx, mapDir(ms, probeDir)); err == nil {
		for _, fi := range list {
			if run := path.Base(fi.Name); run != n.runID() && !n.runIsLive(run) {
				_ = f.Remove(ctx, fi.Name)
			}
		}
	}
	body := enc(probeReq{Name: n.runID(), Data: data, Store: pattern})
	for _, m := range n.d.view.Members() {
		if m.ID == n.d.self || m.RPC == "" {
			continue
		}
		var ans codeAns
		var err error
		for try := 0; try < 50; try++ { // a member that just started may not serve yet
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			var b []byte
			b, err = n.d.rpc(cctx, m.RPC, mProbe, body)
			cancel()
			if err == nil {
				err = dec(b, &ans)
			}
			if err == nil || !errors.Is(err, cluster.ErrNoHandler) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			n.log.Warn("stowage: could not check that the map-store storage is shared", "member", m.ID, "err", err)
			continue
		}
		if ans.Code != codeOK {
			return fmt.Errorf("%w: member %s does not see %s/%s of hazelcast.map.%s.map-store (namespace %q, clusterName %q, storage %s): %s",
				ErrNotShared, m.ID, mapDir(ms, probeDir), n.runID(), pattern, ms.Namespace(), ms.ClusterName(), ms.Properties.Get("fs.defaultFS", ms.Properties.Get("storage.type", "")), ans.Msg)
		}
	}
	return nil
}

// onProbe answers whether this member sees another member's probe file.
func (n *Node) onProbe(ctx context.Context, req *probeReq) codeAns {
	var ms *config.MapStoreConfig
	for _, mc := range n.cfg.Hazelcast.Maps {
		if mc.Pattern == req.Store && mc.MapStore != nil {
			ms = mc.MapStore
		}
	}
	if ms == nil {
		return codeAns{Code: codeFailed, Msg: fmt.Sprintf("no map-store entry %q here", req.Store)}
	}
	if err := fsbackend.ValidName(req.Name); err != nil || strings.Contains(req.Name, "/") {
		return codeAns{Code: codeFailed, Msg: "bad probe name"}
	}
	f, err := n.openFS(ctx, ms.Properties)
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	defer f.Close()
	b, err := fsbackend.ReadFile(ctx, f, fsbackend.Join(mapDir(ms, probeDir), req.Name))
	if err != nil {
		return codeAns{Code: codeFailed, Msg: err.Error()}
	}
	if !bytes.Equal(b, req.Data) {
		return codeAns{Code: codeFailed, Msg: "the file holds something else"}
	}
	return codeAns{}
}

// ErrNotShared is returned by Open when the map stores' storage is not
// the same for every member.
var ErrNotShared = errors.New("stowage: map-store storage is not shared by the members")

// Leave hands this member's partitions over to the others, then stops
// it like Close. Without other members it is Close.
func (n *Node) Leave(ctx context.Context) error {
	if n.clu != nil && len(n.d.view.Members()) > 1 {
		if err := n.drain(ctx); err != nil {
			n.log.Warn("stowage: leaving before every partition was handed over", "err", err)
		}
		if err := n.clu.Leave(ctx); err != nil && !errors.Is(err, cluster.ErrClosed) {
			n.log.Warn("stowage: leave", "err", err)
		}
	}
	return n.Close()
}

// drain waits until a table without this member is installed and no
// partition is held here any more.
func (n *Node) drain(ctx context.Context) error {
	n.clu.SetDraining()
	for {
		t, ch := n.d.currentTable()
		busy := t == nil
		if t != nil {
			for p, rs := range t.Owners {
				if slices.Contains(rs, n.d.self) {
					busy = true
					break
				}
				s := n.d.slots[p]
				s.mu.Lock()
				if s.st == stHeld && s.handedTo == "" || s.st == stActive {
					busy = true
				}
				s.mu.Unlock()
				if busy {
					break
				}
			}
		}
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the node without handing partitions over (the others take
// them as from a failed member): it stops loading and the cluster work,
// flushes and closes every map store, leaves membership, and returns once
// every goroutine the node started has stopped.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	var errs []error
	if n.clu != nil {
		errs = append(errs, n.clu.Close())
	}
	if n.d != nil {
		n.d.stop()
	}
	if n.ownT && n.tr != nil {
		errs = append(errs, n.tr.Close())
	}
	n.wg.Wait()
	for _, c := range n.maps {
		if c.store != nil {
			errs = append(errs, c.store.Close())
		}
	}
	return errors.Join(errs...)
}

// Owner returns the member id owning partition p in this member's
// current table ("" before the first table).
func (n *Node) Owner(p int) string {
	t, _ := n.d.currentTable()
	if t == nil {
		return ""
	}
	return t.Owner(p)
}

// SafeWhy says why the cluster is not safe ("" when it is).
func (n *Node) SafeWhy() string {
	_, why := n.safeWhy(context.Background())
	return why
}
