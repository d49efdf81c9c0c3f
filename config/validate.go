package config

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func keyErr(key, format string, a ...any) error {
	return fmt.Errorf("stowage/config: %s: %s", key, fmt.Sprintf(format, a...))
}

// Validate checks each value and the rules between them, and normalises
// the checkpoint namespace (a missing trailing "/" is added, with a
// warning). Every error names the YAML key path.
func (c *Config) Validate() error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	e := &c.Engine
	if e.BackupCount < 0 || e.BackupCount > 6 {
		add(keyErr("seatunnel.engine.backup-count", "%d is out of range 0..6", e.BackupCount))
	}
	if e.HistoryJobExpireMinutes <= 0 {
		add(keyErr("seatunnel.engine.history-job-expire-minutes", "must be positive, got %d", e.HistoryJobExpireMinutes))
	}
	if !e.SlotService.DynamicSlot && e.SlotService.SlotNum <= 0 {
		add(keyErr("seatunnel.engine.slot-service.slot-num", "must be positive when dynamic-slot is false, got %d", e.SlotService.SlotNum))
	}
	cp := &e.Checkpoint
	if cp.Interval <= 0 {
		add(keyErr("seatunnel.engine.checkpoint.interval", "must be positive (milliseconds)"))
	}
	if cp.Timeout <= 0 {
		add(keyErr("seatunnel.engine.checkpoint.timeout", "must be positive (milliseconds)"))
	}
	add(c.validateCheckpointStorage())
	h := &c.Hazelcast
	if strings.TrimSpace(h.ClusterName) == "" {
		add(keyErr("hazelcast.cluster-name", "must not be empty"))
	}
	if h.Network.Port < 1 || h.Network.Port > 65535 {
		add(keyErr("hazelcast.network.port", "%d is out of range 1..65535", h.Network.Port))
	}
	seen := map[string]bool{}
	for i := range h.Maps {
		mc := &h.Maps[i]
		key := "hazelcast.map." + mc.Pattern
		if seen[mc.Pattern] {
			add(keyErr(key, "declared twice"))
		}
		seen[mc.Pattern] = true
		if strings.Count(mc.Pattern, "*") > 1 {
			add(keyErr(key, "a map name pattern may hold one '*'"))
		}
		if mc.BackupCount < 0 || mc.BackupCount > 6 {
			add(keyErr(key+".backup-count", "%d is out of range 0..6", mc.BackupCount))
		}
		if mc.AsyncBackupCount < 0 || mc.BackupCount+mc.AsyncBackupCount > 6 {
			add(keyErr(key+".async-backup-count", "backup-count + async-backup-count must be at most 6, got %d + %d", mc.BackupCount, mc.AsyncBackupCount))
		}
		if mc.MapStore != nil && mc.MapStore.Enabled {
			add(validateMapStore(key+".map-store", mc.MapStore))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) validateCheckpointStorage() error {
	s := &c.Engine.Checkpoint.Storage
	const key = "seatunnel.engine.checkpoint.storage"
	switch lower(s.Type) {
	case "hdfs", "localfile":
		s.Type = lower(s.Type)
	case "":
		s.Type = "hdfs"
	default:
		return keyErr(key+".type", "unknown checkpoint storage %q (known: hdfs, localfile)", s.Type)
	}
	if s.MaxRetained < 1 {
		return keyErr(key+".max-retained", "must be at least 1, got %d", s.MaxRetained)
	}
	if s.PluginConfig == nil {
		s.PluginConfig = fsbackend.Properties{}
	}
	ns, err := NormalizeCheckpointNamespace(s.Namespace)
	if err != nil {
		return keyErr(key+".plugin-config.namespace", "%v", err)
	}
	s.Namespace = ns
	if _, err := fsbackend.BackendName(s.PluginConfig); err != nil {
		return keyErr(key+".plugin-config", "%v", err)
	}
	return nil
}

// NormalizeCheckpointNamespace checks a checkpoint namespace and returns
// it ending in "/". It must be absolute and hold no "." or ".." element.
func NormalizeCheckpointNamespace(ns string) (string, error) {
	if ns == "" {
		return "", errors.New("must not be empty (default " + DefaultCheckpointNamespace + ")")
	}
	if !strings.HasPrefix(ns, "/") {
		return "", fmt.Errorf("%q must be an absolute path", ns)
	}
	for _, el := range strings.Split(strings.Trim(ns, "/"), "/") {
		if el == "." || el == ".." || strings.ContainsRune(el, 0) {
			return "", fmt.Errorf("%q must not hold %q", ns, el)
		}
	}
	if !strings.HasSuffix(ns, "/") {
		slog.Warn("stowage/config: checkpoint namespace should end with '/'; appending it", "namespace", ns)
		ns += "/"
	}
	return ns, nil
}

func validateMapStore(key string, ms *MapStoreConfig) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	switch strings.ToUpper(strings.TrimSpace(ms.InitialMode)) {
	case "EAGER", "LAZY":
		ms.InitialMode = strings.ToUpper(strings.TrimSpace(ms.InitialMode))
	default:
		add(keyErr(key+".initial-mode", "%q is not EAGER or LAZY", ms.InitialMode))
	}
	if ms.WriteDelaySeconds != 0 {
		add(keyErr(key+".write-delay-seconds", "only 0 (write-through) is supported, got %d: a write is acknowledged only once durable", ms.WriteDelaySeconds))
	}
	p := ms.Properties
	pk := key + ".properties."
	switch ms.StoreType() {
	case "hdfs":
		ns := p.Get("namespace", "")
		switch {
		case ns == "":
			add(keyErr(pk+"namespace", "required"))
		case !path.IsAbs(ns):
			add(keyErr(pk+"namespace", "%q must be an absolute path", ns))
		case hasDotDot(ns):
			add(keyErr(pk+"namespace", "%q must not hold '..'", ns))
		}
		cn := p.Get("clusterName", "")
		switch {
		case cn == "":
			add(keyErr(pk+"clusterName", "required"))
		case cn == "." || cn == ".." || strings.ContainsAny(cn, "/\\\x00"):
			add(keyErr(pk+"clusterName", "%q must not hold '/', '\\\\', NUL or be '.' or '..'", cn))
		}
		if _, err := fsbackend.BackendName(p); err != nil {
			add(keyErr(pk+"storage.type", "%v", err))
		}
		if bs := p.Get("block.size", ""); bs != "" {
			if n, err := strconv.ParseInt(bs, 10, 64); err != nil || n <= 0 {
				add(keyErr(pk+"block.size", "%q is not a positive number of bytes", bs))
			}
		}
		if r := p.Get("snapshot.retain", ""); r != "" && r != "1" && r != "2" {
			add(keyErr(pk+"snapshot.retain", "%q: must be 1 or 2", r))
		}
	case "bbolt":
		if p.Get("path", "") == "" {
			add(keyErr(pk+"path", "required with type bbolt"))
		}
	default:
		add(keyErr(pk+"type", "unknown map store %q (known: hdfs, bbolt)", p.Get("type", "")))
	}
	return errors.Join(errs...)
}

func hasDotDot(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return true
		}
	}
	return false
}

// MapFor returns the map entry that configures the map called name, by
// Hazelcast's rules: an exact name wins, then the matching pattern with
// the most literal characters, then an entry called "default".
func (h *Hazelcast) MapFor(name string) (MapConfig, bool) {
	best, bestLen, found := MapConfig{}, -1, false
	for _, mc := range h.Maps {
		if mc.Pattern == name {
			return mc, true
		}
		if pre, suf, ok := strings.Cut(mc.Pattern, "*"); ok &&
			len(name) >= len(pre)+len(suf) && strings.HasPrefix(name, pre) && strings.HasSuffix(name, suf) {
			if l := len(pre) + len(suf); l > bestLen {
				best, bestLen, found = mc, l, true
			}
		}
	}
	if found {
		return best, true
	}
	for _, mc := range h.Maps {
		if mc.Pattern == "default" {
			return mc, true
		}
	}
	return MapConfig{Pattern: name, BackupCount: 1}, false
}
