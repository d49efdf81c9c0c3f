package config

import (
	"fmt"
	"sort"
	"strings"
)

// String prints the configuration as YAML-like text with every secret
// value redacted, for logs and `stowage node -v`.
func (c *Config) String() string {
	var b strings.Builder
	e := c.Engine
	fmt.Fprintf(&b, "seatunnel:\n  engine:\n    backup-count: %d\n    history-job-expire-minutes: %d\n", e.BackupCount, e.HistoryJobExpireMinutes)
	fmt.Fprintf(&b, "    slot-service: {dynamic-slot: %v, slot-num: %d}\n", e.SlotService.DynamicSlot, e.SlotService.SlotNum)
	cs := e.Checkpoint.Storage
	fmt.Fprintf(&b, "    checkpoint:\n      interval: %d\n      timeout: %d\n      storage:\n        type: %s\n        max-retained: %d\n        namespace: %s\n        plugin-config: %s\n",
		e.Checkpoint.Interval.Milliseconds(), e.Checkpoint.Timeout.Milliseconds(), cs.Type, cs.MaxRetained, cs.Namespace, cs.PluginConfig)
	h := c.Hazelcast
	fmt.Fprintf(&b, "hazelcast:\n  cluster-name: %s\n  network: {port: %d, auto-increment: %v, member-list: [%s]}\n", h.ClusterName, h.Network.Port, h.Network.PortAutoIncrement, strings.Join(h.Network.MemberList, ", "))
	keys := make([]string, 0, len(h.Properties))
	for k := range h.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "  properties.%s: %s\n", k, h.Properties[k])
	}
	for _, mc := range h.Maps {
		fmt.Fprintf(&b, "  map.%s: {backup-count: %d, async-backup-count: %d}\n", mc.Pattern, mc.BackupCount, mc.AsyncBackupCount)
		if ms := mc.MapStore; ms != nil {
			fmt.Fprintf(&b, "    map-store: {enabled: %v, initial-mode: %s, properties: %s}\n", ms.Enabled, ms.InitialMode, ms.Properties)
		}
	}
	return b.String()
}
