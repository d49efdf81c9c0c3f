package config

import (
	"io"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/stowage/stowage/fsbackend"
)

// Redacted is what a secret value is printed as.
const Redacted = fsbackend.Redacted

// Dump writes the configuration as two YAML documents, seatunnel.yaml then
// hazelcast.yaml, separated by "---": every value this package reads, with
// defaults filled in, and every secret value (access keys, secret keys,
// tokens, passwords, keytabs, key files, and passwords inside URIs)
// replaced by Redacted. Each document parses back to the same
// configuration, secrets aside.
func (c *Config) Dump(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	st := c.seatunnelNode()
	st.HeadComment = SeatunnelFile
	if err := enc.Encode(st); err != nil {
		return err
	}
	hz := c.hazelcastNode()
	hz.HeadComment = HazelcastFile
	if err := enc.Encode(hz); err != nil {
		return err
	}
	return enc.Close()
}

// String is Dump into a string, for logs and `stowage node -v`.
func (c *Config) String() string {
	var b strings.Builder
	if err := c.Dump(&b); err != nil {
		return "stowage/config: " + err.Error()
	}
	return b.String()
}

func (c *Config) seatunnelNode() *yaml.Node {
	e := c.Engine
	s := e.Checkpoint.Storage
	pc := propsNode(s.PluginConfig)
	if _, ok := s.PluginConfig["namespace"]; !ok && s.Namespace != DefaultCheckpointNamespace {
		pc.Content = append([]*yaml.Node{str("namespace"), str(s.Namespace)}, pc.Content...)
	}
	engine := mapping(
		"backup-count", num(e.BackupCount),
		"queue-type", str(e.QueueType),
		"print-execution-info-interval", num(e.PrintExecutionInfoInterval),
		"print-job-metrics-info-interval", num(e.PrintJobMetricsInfoInterval),
		"job-metrics-backup-interval", num(e.JobMetricsBackupInterval),
		"history-job-expire-minutes", num(e.HistoryJobExpireMinutes),
		"classloader-cache-mode", boolean(e.ClassloaderCacheMode),
		"slot-service", mapping(
			"dynamic-slot", boolean(e.SlotService.DynamicSlot),
			"slot-num", num(e.SlotService.SlotNum),
		),
		"checkpoint", mapping(
			"interval", num(int(e.Checkpoint.Interval.Milliseconds())),
			"timeout", num(int(e.Checkpoint.Timeout.Milliseconds())),
			"storage", mapping(
				"type", str(s.Type),
				"max-retained", num(s.MaxRetained),
				"plugin-config", pc,
			),
		),
	)
	if h := e.HTTP.httpNode(); h != nil {
		engine.Content = append(engine.Content, str("http"), h)
	}
	return mapping("seatunnel", mapping("engine", engine))
}

func (c *Config) hazelcastNode() *yaml.Node {
	h := c.Hazelcast
	tcp := mapping("enabled", boolean(h.Network.TCPIPEnabled))
	if len(h.Network.MemberList) > 0 {
		l := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, m := range h.Network.MemberList {
			l.Content = append(l.Content, str(m))
		}
		tcp.Content = append(tcp.Content, str("member-list"), l)
	}
	maps := mapping()
	for _, mc := range h.Maps {
		m := mapping("async-backup-count", num(mc.AsyncBackupCount))
		if mc.backupCountSet {
			m = mapping("backup-count", num(mc.BackupCount), "async-backup-count", num(mc.AsyncBackupCount))
		}
		if mc.SplitBrainProtectionRef != "" {
			m.Content = append(m.Content, str("split-brain-protection-ref"), str(mc.SplitBrainProtectionRef))
		}
		if mc.TimeToLiveSeconds != 0 {
			m.Content = append(m.Content, str("time-to-live-seconds"), num(mc.TimeToLiveSeconds))
		}
		if mc.MaxIdleSeconds != 0 {
			m.Content = append(m.Content, str("max-idle-seconds"), num(mc.MaxIdleSeconds))
		}
		if ms := mc.MapStore; ms != nil {
			store := mapping("enabled", boolean(ms.Enabled), "initial-mode", str(ms.InitialMode))
			if ms.FactoryClassName != "" {
				store.Content = append(store.Content, str("factory-class-name"), str(ms.FactoryClassName))
			}
			if ms.ClassName != "" {
				store.Content = append(store.Content, str("class-name"), str(ms.ClassName))
			}
			store.Content = append(store.Content,
				str("write-delay-seconds"), num(ms.WriteDelaySeconds),
				str("write-batch-size"), num(ms.WriteBatchSize),
				str("write-coalescing"), boolean(ms.WriteCoalescing),
				str("properties"), propsNode(ms.Properties))
			m.Content = append(m.Content, str("map-store"), store)
		}
		maps.Content = append(maps.Content, str(mc.Pattern), m)
	}
	network := mapping(
		"port", mapping(
			"port", num(h.Network.Port),
			"auto-increment", boolean(h.Network.PortAutoIncrement),
			"port-count", num(h.Network.PortCount),
		),
		"join", mapping("tcp-ip", tcp),
	)
	if h.Network.PublicAddress != "" {
		network.Content = append(network.Content, str("public-address"), str(h.Network.PublicAddress))
	}
	if s := h.Network.SSL; s.Enabled || s.CertFile != "" || s.SecretFile != "" {
		network.Content = append(network.Content, str("ssl"), dumpMemberSSL(s))
	}
	hz := mapping(
		"cluster-name", str(h.ClusterName),
		"network", network,
		"properties", propsNode(h.Properties),
	)
	if len(h.SplitBrainProtection) > 0 {
		names := make([]string, 0, len(h.SplitBrainProtection))
		for name := range h.SplitBrainProtection {
			names = append(names, name)
		}
		sort.Strings(names)
		sbp := mapping()
		for _, name := range names {
			sb := h.SplitBrainProtection[name]
			sbp.Content = append(sbp.Content, str(name), mapping("enabled", boolean(sb.Enabled),
				"minimum-cluster-size", num(sb.MinimumClusterSize), "protect-on", str(sb.ProtectOn)))
		}
		hz.Content = append(hz.Content, str("split-brain-protection"), sbp)
	}
	if len(h.Maps) > 0 {
		hz.Content = append(hz.Content, str("map"), maps)
	}
	return mapping("hazelcast", hz)
}

// propsNode is a mapping of properties in key order with secrets redacted.
func propsNode(p map[string]string) *yaml.Node {
	r := fsbackend.Properties(p).Redacted()
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	n := mapping()
	for _, k := range keys {
		n.Content = append(n.Content, str(k), str(r[k]))
	}
	return n
}

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		n.Content = append(n.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return n
}

// str is a string scalar; the user information of any URI in it is
// redacted, whichever key holds it.
func str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fsbackend.RedactURIs(s)}
}
func num(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}
func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}
