package config

// The keys of seatunnel.yaml: those SeaTunnel's engine reads
// (YamlSeaTunnelDomConfigProcessor and ServerConfigOptions, 2.3.x and
// later) and those its documents describe (hybrid and separated cluster
// deployment, checkpoint storage, jar storage, telemetry, security,
// autoscaling, managed source runtime). SeaTunnel only warns about a key
// it does not know; stowage refuses it, so that a misspelt key cannot
// silently fall back to a default.
//
// stowage acts on backup-count and checkpoint.storage; every other key is
// accepted and reported as having no effect.
var seatunnelSchema = block(map[string]*schema{
	"engine": engineSchema,
})

var engineSchema = block(map[string]*schema{
	"backup-count":                     inEffect,
	"queue-type":                       noEffect,
	"print-execution-info-interval":    noEffect,
	"print-job-metrics-info-interval":  noEffect,
	"job-metrics-backup-interval":      noEffect,
	"job-metrics-partition-count":      noEffect,
	"metrics-fetch-timeout-ms":         noEffect,
	"task_execution_thread_share_mode": noEffect,
	"history-job-expire-minutes":       inEffect,
	"state-cleanup-delay-millis":       noEffect,
	"classloader-cache-mode":           noEffect,
	"job-schedule-strategy":            noEffect,
	"slot-service":                     keysNoEffect("dynamic-slot", "slot-num", "slot-allocate-strategy"),
	"checkpoint": block(map[string]*schema{
		"interval":              noEffect,
		"timeout":               noEffect,
		"min-pause":             noEffect,
		"schema-change-timeout": noEffect,
		"max-concurrent":        noEffect,
		"tolerable-failure":     noEffect,
		"storage": block(map[string]*schema{
			"type":          inEffect,
			"max-retained":  inEffect,
			"plugin-config": freeInEffect,
		}),
	}),
	"jar-storage": block(map[string]*schema{
		"enable":                              noEffect,
		"connector-jar-storage-enable":        noEffect,
		"connector-jar-storage-mode":          noEffect,
		"connector-jar-storage-path":          noEffect,
		"connector-jar-cleanup-task-interval": noEffect,
		"connector-jar-expiry-time":           noEffect,
		"jar-ha-storage": block(map[string]*schema{
			"type":          noEffect,
			"plugin-config": freeNoEffect,
		}),
	}),
	"event-report-http": block(map[string]*schema{
		"url":     noEffect,
		"headers": freeNoEffect,
	}),
	"telemetry": block(map[string]*schema{
		"metric": keysNoEffect("enabled"),
		"logs":   keysNoEffect("scheduled-deletion-enable"),
	}),
	"http":                httpSchema, // http_security.go
	"coordinator-service": keysNoEffect("core-thread-num", "max-thread-num"),
	"autoscaler": keysNoEffect(
		"enabled", "evaluation-interval-seconds", "metrics-freshness-seconds", "max-future-skew-seconds",
		"scale-out-stabilization-seconds", "scale-in-stabilization-seconds", "scale-out-cpu-threshold",
		"scale-out-jvm-memory-threshold", "scale-in-cpu-threshold", "scale-in-jvm-memory-threshold",
		"fixed-slot-scale-out-threshold", "fixed-slot-scale-in-threshold", "scale-step", "min-workers",
		"max-workers", "history-size",
	),
	"managed-source-runtime": keysNoEffect(
		"enabled", "connector-allowlist", "runtime-protocol-version", "reader-mailbox-max-commands",
		"reader-mailbox-max-bytes", "reader-reserved-control-commands", "reader-reserved-control-bytes",
		"worker-mailbox-max-bytes", "max-command-payload-bytes", "poll-max-records", "poll-max-bytes",
		"poll-soft-duration-ms", "poll-hard-duration-ms", "poll-cancellation-timeout-ms", "idle-wait-ms",
		"admission-budget-ms", "retry-initial-backoff-ms", "retry-max-backoff-ms",
		"command-retry-deadline-ms", "coordinator-async-max-concurrency", "coordinator-async-io-threads",
		"coordinator-async-cpu-threads", "coordinator-async-queue-capacity",
		"assignment-tracker-max-entries", "assignment-tracker-max-bytes",
	),
	// openlineage's keys are not documented; its block is taken whole.
	"openlineage": freeNoEffect,
})
