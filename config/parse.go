package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/stowage/stowage/fsbackend"
)

// node is a YAML value with where it came from.
type node struct {
	file string
	path string
	n    *yaml.Node
}

func (n node) errf(format string, a ...any) error {
	return fmt.Errorf("stowage/config: %s:%d: %s: %s", n.file, n.n.Line, n.path, fmt.Sprintf(format, a...))
}

func (n node) isNull() bool {
	return n.n == nil || (n.n.Kind == yaml.ScalarNode && (n.n.Tag == "!!null" || n.n.Value == "" && n.n.Style == 0))
}

// entries returns the key/value pairs of a mapping node in order.
func (n node) entries() ([]string, []node, error) {
	if n.isNull() {
		return nil, nil, nil
	}
	if n.n.Kind != yaml.MappingNode {
		return nil, nil, n.errf("want a mapping")
	}
	var keys []string
	var vals []node
	for i := 0; i+1 < len(n.n.Content); i += 2 {
		k := n.n.Content[i].Value
		p := k
		if n.path != "" {
			p = n.path + "." + k
		}
		keys = append(keys, k)
		vals = append(vals, node{file: n.file, path: p, n: n.n.Content[i+1]})
	}
	return keys, vals, nil
}

func (n node) scalar() (string, error) {
	if n.isNull() {
		return "", nil
	}
	if n.n.Kind != yaml.ScalarNode {
		return "", n.errf("want a single value")
	}
	return n.n.Value, nil
}

func (n node) int() (int, error) {
	s, err := n.scalar()
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, n.errf("%q is not an integer", s)
	}
	return v, nil
}

func (n node) bool() (bool, error) {
	s, err := n.scalar()
	if err != nil {
		return false, err
	}
	v, err := strconv.ParseBool(strings.TrimSpace(s))
	if err != nil {
		return false, n.errf("%q is not true or false", s)
	}
	return v, nil
}

func (n node) millis() (time.Duration, error) {
	v, err := n.int()
	return time.Duration(v) * time.Millisecond, err
}

func (n node) strings() ([]string, error) {
	if n.isNull() {
		return nil, nil
	}
	if n.n.Kind == yaml.ScalarNode {
		// Hazelcast also accepts one comma-separated string.
		var out []string
		for _, s := range strings.Split(n.n.Value, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
	if n.n.Kind != yaml.SequenceNode {
		return nil, n.errf("want a list")
	}
	var out []string
	for _, c := range n.n.Content {
		if c.Kind != yaml.ScalarNode {
			return nil, n.errf("want a list of values")
		}
		out = append(out, c.Value)
	}
	return out, nil
}

// flat turns a mapping of scalars into properties; nested mappings are
// joined with dots (a.b: {c: 1} gives a.b.c = 1).
func (n node) flat(into fsbackend.Properties, prefix string) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		full := k
		if prefix != "" {
			full = prefix + "." + k
		}
		if vals[i].n.Kind == yaml.MappingNode {
			if err := vals[i].flat(into, full); err != nil {
				return err
			}
			continue
		}
		if vals[i].isNull() {
			continue // `key:` with no value, as the docs' templates have it
		}
		s, err := vals[i].scalar()
		if err != nil {
			return err
		}
		into[full] = s
	}
	return nil
}

func root(data []byte, file string) (node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return node{}, fmt.Errorf("stowage/config: %s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		return node{file: file}, nil
	}
	return node{file: file, n: doc.Content[0]}, nil
}

func parse(seatunnel, hazelcast []byte, stFile, hzFile string) (*Config, error) {
	c := Default()
	if len(seatunnel) > 0 {
		r, err := root(seatunnel, stFile)
		if err != nil {
			return nil, err
		}
		if err := parseSeatunnel(c, r); err != nil {
			return nil, err
		}
	}
	if len(hazelcast) > 0 {
		r, err := root(hazelcast, hzFile)
		if err != nil {
			return nil, err
		}
		if err := parseHazelcast(c, r); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// ignoredEngineBlocks are seatunnel.engine keys SeaTunnel has and stowage
// accepts without using.
var ignoredEngineBlocks = map[string]bool{
	"http": true, "telemetry": true, "jar-storage": true, "event-report-http": true,
	"coordinator-service": true, "job-schedule-strategy": true, "connector-jar-storage": true,
	"enable-http-server": true, "job-execution-timeout": true, "queue-capacity": true,
	"print-job-history-info-interval": true, "classloader-cache": true, "scheduling": true,
}

func parseSeatunnel(c *Config, r node) error {
	keys, vals, err := r.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		if k != "seatunnel" {
			return vals[i].errf("unknown top-level key (seatunnel.yaml holds one block, seatunnel)")
		}
		ks, vs, err := vals[i].entries()
		if err != nil {
			return err
		}
		for j, k2 := range ks {
			if k2 != "engine" {
				return vs[j].errf("unknown key (want seatunnel.engine)")
			}
			if err := parseEngine(&c.Engine, vs[j]); err != nil {
				return err
			}
		}
	}
	return nil
}

func parseEngine(e *Engine, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		v := vals[i]
		var err error
		switch k {
		case "backup-count":
			e.BackupCount, err = v.int()
		case "queue-type":
			e.QueueType, err = v.scalar()
		case "print-execution-info-interval":
			e.PrintExecutionInfoInterval, err = v.int()
		case "print-job-metrics-info-interval":
			e.PrintJobMetricsInfoInterval, err = v.int()
		case "job-metrics-backup-interval":
			e.JobMetricsBackupInterval, err = v.int()
		case "history-job-expire-minutes":
			e.HistoryJobExpireMinutes, err = v.int()
		case "classloader-cache-mode":
			e.ClassloaderCacheMode, err = v.bool()
		case "slot-service":
			err = parseSlots(&e.SlotService, v)
		case "checkpoint":
			err = parseCheckpoint(&e.Checkpoint, v)
		default:
			if !ignoredEngineBlocks[k] {
				err = v.errf("unknown key")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseSlots(s *SlotService, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		switch k {
		case "dynamic-slot":
			s.DynamicSlot, err = vals[i].bool()
		case "slot-num":
			s.SlotNum, err = vals[i].int()
		case "slot-allocate-strategy":
			_, err = vals[i].scalar()
		default:
			err = vals[i].errf("unknown key")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseCheckpoint(c *Checkpoint, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		switch k {
		case "interval":
			c.Interval, err = vals[i].millis()
		case "timeout":
			c.Timeout, err = vals[i].millis()
		case "storage":
			err = parseCheckpointStorage(&c.Storage, vals[i])
		default:
			err = vals[i].errf("unknown key")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseCheckpointStorage(s *CheckpointStorage, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		switch k {
		case "type":
			s.Type, err = vals[i].scalar()
		case "max-retained":
			s.MaxRetained, err = vals[i].int()
		case "plugin-config":
			s.PluginConfig = fsbackend.Properties{}
			err = vals[i].flat(s.PluginConfig, "")
			if ns, ok := s.PluginConfig["namespace"]; ok {
				s.Namespace = ns
			}
		default:
			err = vals[i].errf("unknown key")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseHazelcast(c *Config, r node) error {
	keys, vals, err := r.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		switch k {
		case "hazelcast":
			if err := parseHZ(&c.Hazelcast, vals[i]); err != nil {
				return err
			}
		case "map":
			// A fragment as the SeaTunnel docs show it: map: directly.
			if err := parseMaps(&c.Hazelcast, vals[i]); err != nil {
				return err
			}
		default:
			return vals[i].errf("unknown top-level key (hazelcast.yaml holds one block, hazelcast)")
		}
	}
	return nil
}

func parseHZ(h *Hazelcast, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		v := vals[i]
		switch k {
		case "cluster-name":
			h.ClusterName, err = v.scalar()
		case "network":
			err = parseNetwork(&h.Network, v)
		case "properties":
			p := fsbackend.Properties{}
			err = v.flat(p, "")
			for pk, pv := range p {
				h.Properties[pk] = pv
			}
		case "map":
			err = parseMaps(h, v)
		default:
			// Other Hazelcast sections (instance-name, jet, partition-group,
			// executor-service, ...) are accepted and not used.
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseNetwork(nw *Network, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, k := range keys {
		v := vals[i]
		switch k {
		case "port":
			if v.n.Kind == yaml.ScalarNode {
				nw.Port, err = v.int()
				break
			}
			ks, vs, e := v.entries()
			if e != nil {
				return e
			}
			for j, pk := range ks {
				switch pk {
				case "port":
					nw.Port, err = vs[j].int()
				case "auto-increment":
					nw.PortAutoIncrement, err = vs[j].bool()
				case "port-count":
					nw.PortCount, err = vs[j].int()
				default:
					err = vs[j].errf("unknown key")
				}
				if err != nil {
					return err
				}
			}
		case "join":
			ks, vs, e := v.entries()
			if e != nil {
				return e
			}
			for j, jk := range ks {
				if jk != "tcp-ip" {
					continue // multicast, kubernetes, ...: not used
				}
				tk, tv, e := vs[j].entries()
				if e != nil {
					return e
				}
				for m, key := range tk {
					switch key {
					case "enabled":
						nw.TCPIPEnabled, err = tv[m].bool()
					case "member-list", "members":
						var l []string
						l, err = tv[m].strings()
						nw.MemberList = append(nw.MemberList, l...)
					case "connection-timeout-seconds", "required-member":
						_, err = tv[m].scalar()
					default:
						err = tv[m].errf("unknown key")
					}
					if err != nil {
						return err
					}
				}
			}
		default:
			// rest-api, public-address, interfaces, ssl, ...: not used
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseMaps(h *Hazelcast, n node) error {
	keys, vals, err := n.entries()
	if err != nil {
		return err
	}
	for i, name := range keys {
		mc := MapConfig{Pattern: name, BackupCount: 1}
		ks, vs, err := vals[i].entries()
		if err != nil {
			return err
		}
		for j, k := range ks {
			v := vs[j]
			switch k {
			case "backup-count":
				mc.BackupCount, err = v.int()
			case "async-backup-count":
				mc.AsyncBackupCount, err = v.int()
			case "map-store":
				mc.MapStore, err = parseMapStore(v)
			default:
				// in-memory-format, eviction, time-to-live-seconds, ...: not used
			}
			if err != nil {
				return err
			}
		}
		h.Maps = append(h.Maps, mc)
	}
	return nil
}

func parseMapStore(n node) (*MapStoreConfig, error) {
	ms := &MapStoreConfig{Enabled: true, InitialMode: "LAZY", WriteBatchSize: 1, WriteCoalescing: true, Properties: fsbackend.Properties{}}
	keys, vals, err := n.entries()
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		v := vals[i]
		switch k {
		case "enabled":
			ms.Enabled, err = v.bool()
		case "initial-mode":
			ms.InitialMode, err = v.scalar()
		case "factory-class-name":
			ms.FactoryClassName, err = v.scalar()
		case "class-name":
			ms.ClassName, err = v.scalar()
		case "write-delay-seconds":
			ms.WriteDelaySeconds, err = v.int()
		case "write-batch-size":
			ms.WriteBatchSize, err = v.int()
		case "write-coalescing":
			ms.WriteCoalescing, err = v.bool()
		case "offload":
			_, err = v.bool()
		case "properties":
			err = v.flat(ms.Properties, "")
		default:
			err = v.errf("unknown key")
		}
		if err != nil {
			return nil, err
		}
	}
	return ms, nil
}
