package stowage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"

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
	if h := n.opts.hooks(); h.View != nil && h.Transport != nil {
		n.tr = h.Transport
		return h.View, h.Transport, nil
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
	sec, err := n.memberSecurity()
	if err != nil {
		return nil, nil, err
	}
	tr, err := cluster.ListenTCP(net.JoinHostPort(host, strconv.Itoa(tport)), cluster.TCPOptions{Logger: n.log, Security: sec})
	if err != nil {
		return nil, nil, fmt.Errorf("stowage: member transport: %w", err)
	}
	clu, err := cluster.Join(ctx, cluster.Config{
		ClusterName: n.cfg.Hazelcast.ClusterName, BindAddr: host, Port: nw.Port,
		PortAutoIncrement: nw.PortAutoIncrement, PortCount: nw.PortCount, MemberList: nw.MemberList,
		RPCAddr: tr.Addr(), Run: run, Logger: n.log, Timing: n.opts.hooks().Timing, GossipKey: sec.GossipKey(),
	})
	if err != nil {
		tr.Close()
		return nil, nil, err
	}
	n.clu, n.tr, n.ownT = clu, tr, true
	return clu, tr, nil
}

// memberSecurity is hazelcast.network.ssl as the transport takes it; nil
// when it is off.
func (n *Node) memberSecurity() (*cluster.Security, error) {
	ssl := n.cfg.Hazelcast.Network.SSL
	if !ssl.Enabled {
		return nil, nil
	}
	secret, err := ssl.Secret()
	if err != nil {
		return nil, fmt.Errorf("stowage: %w", err)
	}
	if !ssl.PKI() && secret == nil {
		return nil, fmt.Errorf("stowage: hazelcast.network.ssl.enabled is true but there is no credential: give properties.keyCertChainFile, keyFile and trustCertCollectionFile, or properties.cluster-secret-file, or set %s", config.ClusterSecretEnv)
	}
	if secret == nil {
		// Certificates authenticate the transport, not memberlist: without
		// a gossip key a stranger could still enter the membership view
		// and be given partitions it cannot serve.
		return nil, fmt.Errorf("stowage: hazelcast.network.ssl with certificates needs a cluster secret as well, which keys memberlist's gossip: give properties.cluster-secret-file or set %s", config.ClusterSecretEnv)
	}
	return &cluster.Security{CertFile: ssl.CertFile, KeyFile: ssl.KeyFile, CAFile: ssl.CAFile, AllowedSANs: ssl.AllowedSANs, Secret: secret}, nil
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
	replicas, startMin, publishMin int
}

// clusterConfig derives the table's replica-set size (owner plus the
// most backups any map asks for), the members needed before the first
// table (hazelcast.initial.min.cluster.size) and before any later one (the
// largest split-brain protection minimum of a map).
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
	// A master that sees fewer members than a map's split-brain
	// protection asks for publishes no table: the members of a minority
	// keep the table they had instead of taking every partition over
	// under a table of their own, whose newer epochs would outrank the
	// majority's copies once the network heals.
	publish := 0
	for _, mc := range h.Maps {
		if sb, ok := h.SplitBrainProtection[mc.SplitBrainProtectionRef]; ok && sb.Enabled {
			publish = max(publish, sb.MinimumClusterSize)
		}
	}
	return clusterSettings{replicas: b + 1, startMin: start, publishMin: publish}
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
func (n *Node) runID() string { return n.view.Self().Run }

// runIsLive reports whether a member run still writes to shared storage:
// it belongs to a live member.
func (n *Node) runIsLive(run string) bool {
	if run == n.runID() {
		return true
	}
	return n.liveRuns.has(n.view, run)
}

// storeLiveness is the map stores' IsLive: nil for a member alone (no
// other run can be writing), else runIsLive.
func (n *Node) storeLiveness() func(string) bool {
	if n.tr == nil {
		return nil
	}
	return n.runIsLive
}

// probeDir is where members leave a file so that the others can check
// they share the map stores' storage: namespace/clusterName/probeDir/.
const probeDir = ".stowage-members"

// probeGrace is how old a run must be before its probe file may be
// removed by another member that does not see it.
const probeGrace = 10 * time.Minute

// runStart reads the start time from a run id (filestore.NewRunID:
// YYYYMMDDTHHMMSS-hex, UTC).
func runStart(run string) (time.Time, bool) {
	stamp, _, ok := strings.Cut(run, "-")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102T150405", stamp)
	return t, err == nil
}

// checkShared refuses to run a cluster on map-store storage that the
// members do not share (a local directory on each host, a different
// bucket or namespace): the member writes a file under each map store's
// namespace/clusterName and asks every other member whether it sees it
// there (shared/DESIGN.md §3). A member alone has nothing to check.
func (n *Node) checkShared(ctx context.Context) error {
	if n.tr == nil {
		return nil
	}
	startMin := n.clusterConfig().startMin
	var errs []error
	for _, mc := range n.cfg.Hazelcast.Maps {
		ms := mc.MapStore
		if ms == nil || !ms.Enabled {
			continue
		}
		if ms.StoreType() == config.StoreBBolt {
			if startMin > 1 || len(n.cfg.Hazelcast.Network.MemberList) > 1 {
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
	data := []byte(n.e.Self())
	_ = f.Remove(ctx, name)
	if err := fsbackend.WriteFile(ctx, f, name, data); err != nil {
		return fmt.Errorf("stowage: map-store of %q: write %s: %w", pattern, name, err)
	}
	// Probe files of runs that are over go: runs no member has that
	// started long enough ago that they cannot be members still joining.
	if list, err := f.List(ctx, mapDir(ms, probeDir)); err == nil {
		for _, fi := range list {
			run := path.Base(fi.Name)
			started, ok := runStart(run)
			if run != n.runID() && ok && time.Since(started) > probeGrace && !n.runIsLive(run) {
				_ = f.Remove(ctx, fi.Name)
			}
		}
	}
	body, err := msgpack.Marshal(probeReq{Name: n.runID(), Data: data, Store: pattern})
	if err != nil {
		return err
	}
	for _, m := range n.view.Members() {
		if m.ID == n.e.Self() || m.RPC == "" {
			continue
		}
		var ans probeAns
		var err error
		for try := 0; try < 50; try++ { // a member that just started may not serve yet
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			var b []byte
			b, err = n.e.Call(cctx, m.RPC, mProbe, body)
			cancel()
			if err == nil {
				err = msgpack.Unmarshal(b, &ans)
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
		if ans.Msg != "" {
			return fmt.Errorf("%w: member %s does not see %s/%s of hazelcast.map.%s.map-store (namespace %q, clusterName %q, storage %s): %s",
				ErrNotShared, m.ID, mapDir(ms, probeDir), n.runID(), pattern, ms.Namespace(), ms.ClusterName(), fsbackend.RedactURIs(ms.Properties.Get("fs.defaultFS", ms.Properties.Get("storage.type", ""))), ans.Msg)
		}
	}
	return nil
}

// mProbe asks a member whether it sees a file in the map stores' storage.
const mProbe = "probe"

type probeReq struct {
	Name string `msgpack:"n"` // the file, relative to namespace/clusterName of Store
	Data []byte `msgpack:"d"` // what it must hold
	// Store names the map-store entry (its pattern) whose storage is probed.
	Store string `msgpack:"s"`
}

// probeAns says why the member does not see the file ("": it does).
type probeAns struct {
	Msg string `msgpack:"x,omitempty"`
}

// onProbe answers whether this member sees another member's probe file.
func (n *Node) onProbe(ctx context.Context, _ string, body []byte) ([]byte, error) {
	var req probeReq
	if err := msgpack.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("stowage: malformed probe: %w", err)
	}
	return msgpack.Marshal(probeAns{Msg: n.probe(ctx, &req)})
}

// probe checks one probe file; it returns "" when it is there as sent.
func (n *Node) probe(ctx context.Context, req *probeReq) string {
	var ms *config.MapStoreConfig
	for _, mc := range n.cfg.Hazelcast.Maps {
		if mc.Pattern == req.Store && mc.MapStore != nil {
			ms = mc.MapStore
		}
	}
	if ms == nil {
		return fmt.Sprintf("no map-store entry %q here", req.Store)
	}
	if err := fsbackend.ValidName(req.Name); err != nil || strings.Contains(req.Name, "/") {
		return "bad probe name"
	}
	f, err := n.openFS(ctx, ms.Properties)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	b, err := fsbackend.ReadFile(ctx, f, fsbackend.Join(mapDir(ms, probeDir), req.Name))
	if err != nil {
		return err.Error()
	}
	if !bytes.Equal(b, req.Data) {
		return "the file holds something else"
	}
	return ""
}
