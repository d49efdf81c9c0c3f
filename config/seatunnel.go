package config

import (
	"log/slog"
	"strings"

	"github.com/stowage/stowage/fsbackend"
)

// parseSeatunnel reads seatunnel.yaml's root into c.Engine.
func parseSeatunnel(c *Config, root node) error {
	es, err := root.entries()
	if err != nil {
		return err
	}
	for _, e := range es {
		if e.key != "seatunnel" {
			return e.val.fail(ErrUnknownKey, "unknown top-level key (seatunnel.yaml holds one block, seatunnel)")
		}
		if err := e.val.check(seatunnelSchema, true); err != nil {
			return err
		}
		if err := readEngine(&c.Engine, e.val.child("engine")); err != nil {
			return err
		}
	}
	return nil
}

func readEngine(e *Engine, n node) error {
	var r reader
	r.int(&e.BackupCount, n.child("backup-count"))
	r.str(&e.QueueType, n.child("queue-type"))
	r.int(&e.PrintExecutionInfoInterval, n.child("print-execution-info-interval"))
	r.int(&e.PrintJobMetricsInfoInterval, n.child("print-job-metrics-info-interval"))
	r.int(&e.JobMetricsBackupInterval, n.child("job-metrics-backup-interval"))
	r.int(&e.HistoryJobExpireMinutes, n.child("history-job-expire-minutes"))
	r.bool(&e.ClassloaderCacheMode, n.child("classloader-cache-mode"))
	e.QueueType = strings.ToLower(strings.TrimSpace(e.QueueType))

	slots := n.child("slot-service")
	r.bool(&e.SlotService.DynamicSlot, slots.child("dynamic-slot"))
	r.int(&e.SlotService.SlotNum, slots.child("slot-num"))

	cp := n.child("checkpoint")
	r.millis(&e.Checkpoint.Interval, cp.child("interval"))
	r.millis(&e.Checkpoint.Timeout, cp.child("timeout"))

	st := cp.child("storage")
	s := &e.Checkpoint.Storage
	r.str(&s.Type, st.child("type"))
	s.Type = strings.ToLower(strings.TrimSpace(s.Type))
	r.int(&s.MaxRetained, st.child("max-retained"))
	if r.err != nil {
		return r.err
	}
	if err := readHTTP(&e.HTTP, n.child("http")); err != nil {
		return err
	}
	pc := st.child("plugin-config")
	props := fsbackend.Properties{}
	if err := pc.props(props, ""); err != nil {
		return err
	}
	s.PluginConfig = props
	if ns, ok := props["namespace"]; ok {
		s.Namespace = normalizeNamespace(ns, pc.child("namespace").path)
		props["namespace"] = s.Namespace
	}
	return nil
}

// normalizeNamespace adds the trailing "/" that SeaTunnel requires of a
// checkpoint namespace, with a warning; SeaTunnel's own shipped
// seatunnel.yaml leaves it out. Other problems are Validate's.
func normalizeNamespace(ns, key string) string {
	t := strings.TrimSpace(ns)
	if t != "" && !strings.HasSuffix(t, "/") {
		slog.Warn("stowage/config: checkpoint namespace does not end with '/'; appending it", "key", key, "namespace", t)
		t += "/"
	}
	return t
}
