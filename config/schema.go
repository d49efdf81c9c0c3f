package config

// The keys SeaTunnel's engine reads from seatunnel.yaml (SeaTunnel 2.3.x,
// YamlSeaTunnelDomConfigProcessor and ServerConfigOptions). SeaTunnel
// itself only warns about a key it does not know; stowage refuses it, so
// that a misspelt key cannot silently fall back to a default.
var seatunnelSchema = block(map[string]*schema{
	"engine": engineSchema,
})

var engineSchema = block(map[string]*schema{
	"backup-count":                     nil,
	"queue-type":                       nil,
	"print-execution-info-interval":    nil,
	"print-job-metrics-info-interval":  nil,
	"job-metrics-backup-interval":      nil,
	"job-metrics-partition-count":      nil,
	"task_execution_thread_share_mode": nil,
	"history-job-expire-minutes":       nil,
	"state-cleanup-delay-millis":       nil,
	"classloader-cache-mode":           nil,
	"job-schedule-strategy":            nil,
	"slot-service": block(map[string]*schema{
		"dynamic-slot":           nil,
		"slot-num":               nil,
		"slot-allocate-strategy": nil,
	}),
	"checkpoint": block(map[string]*schema{
		"interval":              nil,
		"timeout":               nil,
		"schema-change-timeout": nil,
		"max-concurrent":        nil,
		"tolerable-failure":     nil,
		"storage": block(map[string]*schema{
			"type":          nil,
			"max-retained":  nil,
			"plugin-config": free,
		}),
	}),
	"jar-storage": block(map[string]*schema{
		"enable":                              nil,
		"connector-jar-storage-mode":          nil,
		"connector-jar-storage-path":          nil,
		"connector-jar-cleanup-task-interval": nil,
		"connector-jar-expiry-time":           nil,
		"jar-ha-storage": block(map[string]*schema{
			"type":          nil,
			"plugin-config": free,
		}),
	}),
	"event-report-http": block(map[string]*schema{
		"url":     nil,
		"headers": free,
	}),
	"telemetry": block(map[string]*schema{
		"metric": block(map[string]*schema{"enabled": nil}),
		"logs":   block(map[string]*schema{"scheduled-deletion-enable": nil}),
	}),
	"http": block(map[string]*schema{
		"enable-http":          nil,
		"port":                 nil,
		"context-path":         nil,
		"enable-dynamic-port":  nil,
		"port-range":           nil,
		"enable-https":         nil,
		"https-port":           nil,
		"key-store-path":       nil,
		"key-store-password":   nil,
		"key-manager-password": nil,
		"trust-store-path":     nil,
		"trust-store-password": nil,
		"enable-basic-auth":    nil,
		"basic-auth-username":  nil,
		"basic-auth-password":  nil,
	}),
	"coordinator-service": block(map[string]*schema{
		"core-thread-num": nil,
		"max-thread-num":  nil,
	}),
})

// hazelcastSections are the top-level sections of a Hazelcast 5 member
// configuration. stowage reads cluster-name, network, properties and map;
// the others are accepted and not used.
var hazelcastSections = []string{
	"advanced-network", "auditlog", "cache", "cardinality-estimator", "cluster-name",
	"config-replacers", "cp-subsystem", "crdt-replication", "data-connection",
	"durable-executor-service", "dynamic-configuration", "executor-service",
	"flake-id-generator", "hot-restart-persistence", "import", "instance-name",
	"instance-tracking", "integrity-checker", "jet", "license-key", "list", "listeners",
	"lite-member", "local-device", "management-center", "map", "member-attributes",
	"metrics", "multimap", "namespaces", "native-memory", "network", "partition-group",
	"persistence", "pn-counter", "properties", "queue", "reliable-topic", "replicatedmap",
	"rest", "ringbuffer", "scheduled-executor-service", "security", "serialization", "set",
	"split-brain-protection", "sql", "topic", "tpc", "user-code-deployment",
	"user-code-namespaces", "vector-collection", "wan-replication",
}

var hazelcastSchema = func() *schema {
	keys := map[string]*schema{}
	for _, s := range hazelcastSections {
		keys[s] = free
	}
	keys["cluster-name"] = nil
	keys["instance-name"] = nil
	keys["license-key"] = nil
	keys["properties"] = free
	keys["network"] = networkSchema
	keys["map"] = &schema{each: mapSchema}
	keys["split-brain-protection"] = &schema{each: splitBrainSchema}
	return block(keys)
}()

// splitBrainSchema is one hazelcast.split-brain-protection.<name> entry.
var splitBrainSchema = block(map[string]*schema{
	"enabled":                                nil,
	"minimum-cluster-size":                   nil,
	"protect-on":                             nil,
	"function-class-name":                    free,
	"listeners":                              free,
	"member-count-split-brain-protection":    free,
	"probabilistic-split-brain-protection":   free,
	"recently-active-split-brain-protection": free,
})

var networkSchema = block(map[string]*schema{
	"public-address": nil,
	"port": {scalar: true, keys: map[string]*schema{
		"port":           nil,
		"auto-increment": nil,
		"port-count":     nil,
	}},
	"outbound-ports": nil,
	"reuse-address":  nil,
	"join": block(map[string]*schema{
		"auto-detection": free,
		"multicast":      free,
		"tcp-ip": block(map[string]*schema{
			"enabled":                    nil,
			"connection-timeout-seconds": nil,
			"required-member":            nil,
			"member-list":                nil,
			"members":                    nil,
			"interface":                  nil,
		}),
		"aws":                  free,
		"gcp":                  free,
		"azure":                free,
		"kubernetes":           free,
		"eureka":               free,
		"discovery-strategies": free,
	}),
	"interfaces":              free,
	"ssl":                     free,
	"socket-interceptor":      free,
	"symmetric-encryption":    free,
	"member-address-provider": free,
	"failure-detector":        free,
	"rest-api":                free,
	"memcache-protocol":       free,
	"tpc-socket":              free,
})

// mapSchema is one hazelcast.map.<name> entry. Keys are checked, so that a
// misspelt map-store cannot silently leave a map without persistence.
var mapSchema = block(map[string]*schema{
	"in-memory-format":           nil,
	"metadata-policy":            nil,
	"statistics-enabled":         nil,
	"per-entry-stats-enabled":    nil,
	"cache-deserialized-values":  nil,
	"backup-count":               nil,
	"async-backup-count":         nil,
	"time-to-live-seconds":       nil,
	"max-idle-seconds":           nil,
	"eviction":                   free,
	"merge-policy":               free,
	"read-backup-data":           nil,
	"hot-restart":                free,
	"data-persistence":           free,
	"event-journal":              free,
	"merkle-tree":                free,
	"near-cache":                 free,
	"wan-replication-ref":        free,
	"indexes":                    free,
	"attributes":                 free,
	"entry-listeners":            free,
	"partition-lost-listeners":   free,
	"split-brain-protection-ref": nil,
	"query-caches":               free,
	"partition-strategy":         nil,
	"partition-attributes":       free,
	"tiered-store":               free,
	"user-code-namespace":        nil,
	"map-store": block(map[string]*schema{
		"enabled":             nil,
		"offload":             nil,
		"initial-mode":        nil,
		"class-name":          nil,
		"factory-class-name":  nil,
		"write-delay-seconds": nil,
		"write-batch-size":    nil,
		"write-coalescing":    nil,
		"properties":          free,
	}),
})
