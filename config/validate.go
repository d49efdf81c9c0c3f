package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// Validate checks every value and the rules between them. It reports all
// problems at once (errors.Join of *Error, each wrapping ErrInvalid and
// naming the YAML key path, with file and line when the value came from a
// file). It does not modify c. No secret value appears in its errors.
func (c *Config) Validate() error {
	v := &validator{c: c}
	v.engine(&c.Engine)
	v.http(&c.Engine.HTTP)
	v.hazelcast(&c.Hazelcast)
	return errors.Join(v.errs...)
}

type validator struct {
	c    *Config
	errs []error
}

func (v *validator) add(key, format string, a ...any) {
	e := &Error{Key: key, Err: kinded(ErrInvalid, v.scrub(fmt.Sprintf(format, a...)))}
	if o := v.c.origin; o != nil {
		if strings.HasPrefix(key, "seatunnel.") {
			e.File = o.seatunnelFile
		} else {
			e.File = o.hazelcastFile
		}
		e.Line = o.lineOf(key)
	}
	v.errs = append(v.errs, e)
}

// lineOf is the line of key, or of the nearest enclosing key that has one.
func (o *origin) lineOf(key string) int {
	for k := key; k != ""; {
		if l, ok := o.lines[k]; ok {
			return l
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return 0
}

// scrub replaces any secret value of the configuration that a message
// might quote (through a URI, say) by "******".
func (v *validator) scrub(msg string) string {
	msg = fsbackend.RedactURIs(msg)
	for _, p := range v.allProperties() {
		for k, val := range p {
			if fsbackend.IsSecretKey(k) && len(val) >= 3 && strings.Contains(msg, val) {
				msg = strings.ReplaceAll(msg, val, "******")
			}
		}
	}
	return msg
}

func (v *validator) allProperties() []fsbackend.Properties {
	out := []fsbackend.Properties{v.c.Engine.Checkpoint.Storage.PluginConfig, fsbackend.Properties(v.c.Hazelcast.Properties)}
	for _, m := range v.c.Hazelcast.Maps {
		if m.MapStore != nil {
			out = append(out, m.MapStore.Properties)
		}
	}
	return out
}

func (v *validator) positive(key string, n int, unit string) {
	if n <= 0 {
		v.add(key, "must be a positive number of %s, got %d", unit, n)
	}
}

func (v *validator) engine(e *Engine) {
	const p = "seatunnel.engine."
	if e.BackupCount < 0 || e.BackupCount > MaxBackupCount {
		v.add(p+"backup-count", "%d is out of range 0..%d", e.BackupCount, MaxBackupCount)
	}
	switch strings.ToLower(e.QueueType) {
	case "blockingqueue", "disruptor":
	default:
		v.add(p+"queue-type", "%q is not blockingqueue or disruptor", e.QueueType)
	}
	v.positive(p+"print-execution-info-interval", e.PrintExecutionInfoInterval, "seconds")
	v.positive(p+"print-job-metrics-info-interval", e.PrintJobMetricsInfoInterval, "seconds")
	v.positive(p+"job-metrics-backup-interval", e.JobMetricsBackupInterval, "seconds")
	v.positive(p+"history-job-expire-minutes", e.HistoryJobExpireMinutes, "minutes")
	if !e.SlotService.DynamicSlot && e.SlotService.SlotNum <= 0 {
		v.add(p+"slot-service.slot-num", "must be positive when dynamic-slot is false, got %d", e.SlotService.SlotNum)
	}
	cp := &e.Checkpoint
	if cp.Interval <= 0 {
		v.add(p+"checkpoint.interval", "must be a positive number of milliseconds, got %d", cp.Interval.Milliseconds())
	}
	if cp.Timeout <= 0 {
		v.add(p+"checkpoint.timeout", "must be a positive number of milliseconds, got %d", cp.Timeout.Milliseconds())
	}
	s := &cp.Storage
	const sp = p + "checkpoint.storage."
	builtin := false
	switch t := strings.ToLower(strings.TrimSpace(s.Type)); {
	case t == checkpointStorageHDFS || t == checkpointStorageLocalFile:
		builtin = true
	case !ValidCheckpointStorageName(t):
		v.add(sp+"type", "%q is not a checkpoint storage name (1 to %d ASCII letters, digits, '.', '_' or '-', starting with a letter)", s.Type, maxStorageNameLen)
	}
	if s.MaxRetained < 1 {
		v.add(sp+"max-retained", "must be at least 1, got %d", s.MaxRetained)
	}
	if msg := checkpointNamespaceProblem(s.Namespace); msg != "" {
		v.add(sp+"plugin-config.namespace", "%s", msg)
	}
	if builtin {
		// A factory of the user's own gets plugin-config as given: only
		// it knows its keys.
		v.backend(sp+"plugin-config.", s.PluginConfig)
	}
}

// The built-in checkpoint storage factories (package checkpoint registers
// them under these names), whose plugin-config Validate checks.
const (
	checkpointStorageHDFS      = "hdfs"
	checkpointStorageLocalFile = "localfile"
)

const maxStorageNameLen = 64

// ValidCheckpointStorageName reports whether name is well-formed as
// seatunnel.engine.checkpoint.storage.type: 1 to 64 ASCII letters, digits,
// '.', '_' or '-', starting with a letter. Names are matched
// case-insensitively. Whether a factory is registered under the name is
// not config's to know (package checkpoint holds the registry): building
// the storage fails on a name no factory has.
func ValidCheckpointStorageName(name string) bool {
	if name == "" || len(name) > maxStorageNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		other := c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !letter && (i == 0 || !other) {
			return false
		}
	}
	return true
}

// checkpointNamespaceProblem describes what is wrong with a checkpoint
// namespace, or returns "".
func checkpointNamespaceProblem(ns string) string {
	switch {
	case ns == "":
		return "must not be empty (default " + DefaultCheckpointNamespace + ")"
	case !strings.HasPrefix(ns, "/"):
		return fmt.Sprintf("%q must be an absolute path", ns)
	case hasBadElement(ns):
		return fmt.Sprintf("%q must not hold '.' or '..' elements or NUL", ns)
	case !strings.HasSuffix(ns, "/"):
		return fmt.Sprintf("%q must end with '/'", ns)
	}
	return ""
}

func hasBadElement(p string) bool {
	if strings.ContainsRune(p, 0) {
		return true
	}
	for _, el := range strings.Split(p, "/") {
		if el == "." || el == ".." {
			return true
		}
	}
	return false
}

// backend checks storage.type and the fs.defaultFS scheme as
// fsbackend.Open will read them.
func (v *validator) backend(prefix string, p fsbackend.Properties) {
	if _, err := fsbackend.BackendName(p); err != nil {
		key := "fs.defaultFS"
		if !known(strings.ToLower(p.Get("storage.type", "hdfs")), fsbackend.StorageTypes) {
			key = "storage.type"
		}
		v.add(prefix+key, "%s", strings.TrimPrefix(err.Error(), "stowage/fsbackend: "))
	}
	if _, err := fsbackend.Umask(p); err != nil {
		v.add(prefix+fsbackend.KeyUmask, "%q is not an octal umask such as 077 or 022", p.Get(fsbackend.KeyUmask, ""))
	}
}

func known(s string, list []string) bool {
	for _, k := range list {
		if s == k {
			return true
		}
	}
	return false
}

func (v *validator) hazelcast(h *Hazelcast) {
	const p = "hazelcast."
	if strings.TrimSpace(h.ClusterName) == "" {
		v.add(p+"cluster-name", "must not be empty")
	}
	if h.Network.Port < 1 || h.Network.Port > 65535 {
		v.add(p+"network.port", "%d is out of range 1..65535", h.Network.Port)
	}
	if h.Network.PortAutoIncrement && (h.Network.PortCount < 1 || h.Network.Port+h.Network.PortCount-1 > 65535) {
		v.add(p+"network.port.port-count", "%d ports from %d leave the range 1..65535", h.Network.PortCount, h.Network.Port)
	}
	seen := map[string]bool{}
	for i := range h.Maps {
		mc := &h.Maps[i]
		key := p + "map." + mc.Pattern
		switch {
		case mc.Pattern == "":
			v.add(p+"map", "an entry has an empty name")
		case seen[mc.Pattern]:
			v.add(key, "declared twice")
		case strings.Count(mc.Pattern, "*") > 1:
			v.add(key, "a map name pattern may hold only one '*'")
		}
		seen[mc.Pattern] = true
		if mc.BackupCount < 0 || mc.BackupCount > MaxBackupCount {
			v.add(key+".backup-count", "%d is out of range 0..%d", mc.BackupCount, MaxBackupCount)
		}
		if mc.AsyncBackupCount < 0 || mc.BackupCount+mc.AsyncBackupCount > MaxBackupCount {
			v.add(key+".async-backup-count", "backup-count + async-backup-count must be 0..%d, got %d + %d", MaxBackupCount, mc.BackupCount, mc.AsyncBackupCount)
		}
		if mc.TimeToLiveSeconds < 0 {
			v.add(key+".time-to-live-seconds", "must be 0 (never expires) or a positive number of seconds, got %d", mc.TimeToLiveSeconds)
		}
		if mc.MaxIdleSeconds < 0 {
			v.add(key+".max-idle-seconds", "must be 0 (never expires) or a positive number of seconds, got %d", mc.MaxIdleSeconds)
		}
		if mc.MapStore != nil && mc.MapStore.Enabled {
			v.mapStore(key+".map-store", mc.MapStore)
		}
		if ref := mc.SplitBrainProtectionRef; ref != "" {
			if _, ok := h.SplitBrainProtection[ref]; !ok {
				v.add(key+".split-brain-protection-ref", "%q names no hazelcast.split-brain-protection entry", ref)
			}
		}
	}
	v.ambiguous(h.Maps)
	names := make([]string, 0, len(h.SplitBrainProtection))
	for name := range h.SplitBrainProtection {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sb := h.SplitBrainProtection[name]
		key := p + "split-brain-protection." + name
		if sb.Enabled && sb.MinimumClusterSize < 2 {
			v.add(key+".minimum-cluster-size", "%d: must be at least 2", sb.MinimumClusterSize)
		}
		switch sb.ProtectOn {
		case "READ", "WRITE", "READ_WRITE":
		default:
			v.add(key+".protect-on", "%q: must be READ, WRITE or READ_WRITE", sb.ProtectOn)
		}
	}
}

// ambiguous refuses two patterns that match some name equally well:
// Hazelcast refuses such a name at run time; stowage says so up front.
func (v *validator) ambiguous(maps []MapConfig) {
	var pats []string
	for _, m := range maps {
		if strings.Count(m.Pattern, "*") == 1 {
			pats = append(pats, m.Pattern)
		}
	}
	sort.Strings(pats)
	for i := range pats {
		for j := i + 1; j < len(pats); j++ {
			if overlap(pats[i], pats[j]) {
				v.add("hazelcast.map."+pats[j], "matches some map names exactly as well as %s: the configuration would be ambiguous", pats[i])
			}
		}
	}
}

func (v *validator) mapStore(key string, ms *MapStoreConfig) {
	switch strings.ToUpper(strings.TrimSpace(ms.InitialMode)) {
	case "EAGER", "LAZY":
	default:
		v.add(key+".initial-mode", "%q is not EAGER or LAZY", ms.InitialMode)
	}
	if ms.WriteDelaySeconds < 0 {
		v.add(key+".write-delay-seconds", "must be 0 (write-through) or more (write-behind), got %d", ms.WriteDelaySeconds)
	}
	if ms.WriteBatchSize < 1 {
		v.add(key+".write-batch-size", "must be at least 1, got %d", ms.WriteBatchSize)
	}
	p := ms.Properties
	pk := key + ".properties."
	switch ms.StoreType() {
	case StoreHDFS:
		switch ns := ms.Namespace(); {
		case ns == "":
			v.add(pk+"namespace", "required")
		case !strings.HasPrefix(ns, "/"):
			v.add(pk+"namespace", "%q must be an absolute path", ns)
		case hasBadElement(ns):
			v.add(pk+"namespace", "%q must not hold '.' or '..' elements or NUL", ns)
		}
		switch cn := ms.ClusterName(); {
		case cn == "":
			v.add(pk+"clusterName", "required")
		case cn == "." || cn == ".." || strings.ContainsAny(cn, "/\\\x00"):
			v.add(pk+"clusterName", "%q must not hold '/', '\\', NUL, nor be '.' or '..'", cn)
		}
		v.backend(pk, p)
		if _, err := ms.BlockSize(); err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				v.add(pk+"block.size", "%s", ce.Err.Error())
			}
		}
		if _, err := ms.CommitDelay(); err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				v.add(pk+KeyCommitDelay, "%s", ce.Err.Error())
			}
		}
		if _, err := ms.OpenFiles(); err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				v.add(pk+KeyOpenFiles, "%s", ce.Err.Error())
			}
		}
		if r := p.Get("snapshot.retain", ""); r != "" && r != "1" && r != "2" {
			v.add(pk+"snapshot.retain", "%q must be 1 or 2", r)
		}
	case StoreBBolt:
		switch path := p.Get("path", ""); {
		case path == "":
			v.add(pk+"path", "required with type bbolt")
		case strings.ContainsRune(path, 0):
			v.add(pk+"path", "must not hold NUL")
		}
	default:
		v.add(pk+"type", "unknown map store %q (known: %s, %s)", p.Get("type", ""), StoreHDFS, StoreBBolt)
	}
}
