package config

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stowage/stowage/fsbackend"
)

// parseHazelcast reads hazelcast.yaml's root into c.Hazelcast.
func parseHazelcast(c *Config, root node) error {
	es, err := root.entries()
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.key != "hazelcast" {
			hint := ""
			if e.key == "map" || e.key == "network" || e.key == "cluster-name" {
				hint = "; put it under hazelcast:"
			}
			return e.val.fail(ErrUnknownKey, "unknown top-level key (%s holds one block, hazelcast%s)", filepath.Base(root.src.file), hint)
		}
		if err := e.val.check(hazelcastSchema, true); err != nil {
			return err
		}
		if err := readHazelcast(&c.Hazelcast, e.val); err != nil {
			return err
		}
	}
	return nil
}

func readHazelcast(h *Hazelcast, n node) error {
	var r reader
	r.str(&h.ClusterName, n.child("cluster-name"))
	h.ClusterName = strings.TrimSpace(h.ClusterName)

	nw := n.child("network")
	port := nw.child("port")
	if !port.null() && port.n.Kind == yaml.ScalarNode {
		r.int(&h.Network.Port, port)
	} else {
		r.int(&h.Network.Port, port.child("port"))
		r.bool(&h.Network.PortAutoIncrement, port.child("auto-increment"))
		r.int(&h.Network.PortCount, port.child("port-count"))
	}
	r.str(&h.Network.PublicAddress, nw.child("public-address"))
	h.Network.PublicAddress = strings.TrimSpace(h.Network.PublicAddress)
	if err := readMemberSSL(&h.Network.SSL, nw.child("ssl")); err != nil {
		return err
	}
	tcp := nw.child("join").child("tcp-ip")
	r.bool(&h.Network.TCPIPEnabled, tcp.child("enabled"))
	if r.err != nil {
		return r.err
	}
	for _, key := range []string{"member-list", "members"} {
		l, err := tcp.child(key).list()
		if err != nil {
			return err
		}
		h.Network.MemberList = append(h.Network.MemberList, l...)
	}

	props := fsbackend.Properties{}
	if err := n.child("properties").props(props, ""); err != nil {
		return err
	}
	if h.Properties == nil {
		h.Properties = map[string]string{}
	}
	for k, v := range props {
		h.Properties[k] = v
	}

	sbps, err := n.child("split-brain-protection").entries()
	if err != nil {
		return err
	}
	for _, e := range sbps {
		sb := SplitBrainProtection{ProtectOn: "READ_WRITE"}
		r.bool(&sb.Enabled, e.val.child("enabled"))
		r.int(&sb.MinimumClusterSize, e.val.child("minimum-cluster-size"))
		r.str(&sb.ProtectOn, e.val.child("protect-on"))
		sb.ProtectOn = strings.ToUpper(strings.TrimSpace(sb.ProtectOn))
		if r.err != nil {
			return r.err
		}
		if h.SplitBrainProtection == nil {
			h.SplitBrainProtection = map[string]SplitBrainProtection{}
		}
		h.SplitBrainProtection[e.key] = sb
	}

	maps, err := n.child("map").entries()
	if err != nil {
		return err
	}
	for _, m := range maps {
		mc, err := readMap(m.key, m.val)
		if err != nil {
			return err
		}
		h.Maps = append(h.Maps, mc)
	}
	return nil
}

func readMap(name string, n node) (MapConfig, error) {
	mc := newMapConfig(name)
	var r reader
	r.int(&mc.BackupCount, n.child("backup-count"))
	mc.backupCountSet = !n.child("backup-count").null()
	r.int(&mc.AsyncBackupCount, n.child("async-backup-count"))
	r.int(&mc.TimeToLiveSeconds, n.child("time-to-live-seconds"))
	r.int(&mc.MaxIdleSeconds, n.child("max-idle-seconds"))
	r.str(&mc.SplitBrainProtectionRef, n.child("split-brain-protection-ref"))
	mc.SplitBrainProtectionRef = strings.TrimSpace(mc.SplitBrainProtectionRef)
	ms := n.child("map-store")
	if ms.n == nil {
		return mc, r.err
	}
	mc.MapStore = newMapStore()
	s := mc.MapStore
	r.bool(&s.Enabled, ms.child("enabled"))
	r.str(&s.InitialMode, ms.child("initial-mode"))
	s.InitialMode = strings.ToUpper(strings.TrimSpace(s.InitialMode))
	r.str(&s.FactoryClassName, ms.child("factory-class-name"))
	r.str(&s.ClassName, ms.child("class-name"))
	r.int(&s.WriteDelaySeconds, ms.child("write-delay-seconds"))
	r.int(&s.WriteBatchSize, ms.child("write-batch-size"))
	r.bool(&s.WriteCoalescing, ms.child("write-coalescing"))
	var offload bool
	r.bool(&offload, ms.child("offload"))
	if r.err != nil {
		return mc, r.err
	}
	return mc, ms.child("properties").props(s.Properties, "")
}

// MapFor returns the entry that configures the map called name, by
// Hazelcast's rules: a partition-key suffix (name@key) is ignored; an entry
// of exactly that name wins; else the matching pattern with the most
// literal characters (engine_* over engine*); else the entry called
// "default". Validate refuses two patterns that could tie. Without a match
// it returns a default entry (Pattern name, backup-count 1, no map store)
// and false. Safe for concurrent use.
func (h *Hazelcast) MapFor(name string) (MapConfig, bool) {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	best, bestLen := -1, -1
	for i, mc := range h.Maps {
		if mc.Pattern == name {
			return mc, true
		}
		if l, ok := matches(mc.Pattern, name); ok && l > bestLen {
			best, bestLen = i, l
		}
	}
	if best >= 0 {
		return h.Maps[best], true
	}
	for _, mc := range h.Maps {
		if mc.Pattern == "default" {
			return mc, true
		}
	}
	return newMapConfig(name), false
}

// matches reports whether a pattern with one '*' matches name, and how
// many literal characters it matched.
func matches(pattern, name string) (int, bool) {
	pre, suf, ok := strings.Cut(pattern, "*")
	if !ok || strings.Contains(suf, "*") {
		return 0, false
	}
	if len(name) < len(pre)+len(suf) || !strings.HasPrefix(name, pre) || !strings.HasSuffix(name, suf) {
		return 0, false
	}
	return len(pre) + len(suf), true
}

// overlap reports whether some map name matches both one-'*' patterns
// with the same number of literal characters, so that MapFor could not
// choose between them.
func overlap(a, b string) bool {
	pa, sa, _ := strings.Cut(a, "*")
	pb, sb, _ := strings.Cut(b, "*")
	if len(pa)+len(sa) != len(pb)+len(sb) {
		return false
	}
	prefixOK := strings.HasPrefix(pa, pb) || strings.HasPrefix(pb, pa)
	suffixOK := strings.HasSuffix(sa, sb) || strings.HasSuffix(sb, sa)
	return prefixOK && suffixOK
}
