package config

// The keys of a Hazelcast 5 member file (hazelcast.yaml,
// hazelcast-master.yaml, hazelcast-worker.yaml). The sections SeaTunnel's
// files and documents use are checked key by key; the other sections of
// Hazelcast's schema are accepted whole.
//
// stowage acts on cluster-name, network.port, network.public-address,
// network.join.tcp-ip (enabled, member-list, members), three properties
// (memberProperties), map.<name> (backup-count, async-backup-count,
// split-brain-protection-ref, map-store) and split-brain-protection;
// every other key is accepted and reported as having no effect.
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
		keys[s] = freeNoEffect
	}
	keys["cluster-name"] = inEffect
	keys["instance-name"] = noEffect
	keys["license-key"] = noEffect
	keys["lite-member"] = keysNoEffect("enabled")
	keys["properties"] = &schema{props: memberProperties}
	keys["network"] = networkSchema
	keys["advanced-network"] = &schema{scan: true}
	keys["security"] = securitySchema
	keys["map"] = eachOf(mapSchema)
	keys["split-brain-protection"] = eachOf(splitBrainSchema)
	return block(keys)
}()

// splitBrainSchema is one hazelcast.split-brain-protection.<name> entry.
var splitBrainSchema = block(map[string]*schema{
	"enabled":                                inEffect,
	"minimum-cluster-size":                   inEffect,
	"protect-on":                             inEffect,
	"function-class-name":                    noEffect,
	"listeners":                              freeNoEffect,
	"member-count-split-brain-protection":    freeNoEffect,
	"probabilistic-split-brain-protection":   freeNoEffect,
	"recently-active-split-brain-protection": freeNoEffect,
})

// securitySchema is hazelcast.security: Enterprise only, refused when on.
var securitySchema = func() *schema {
	keys := map[string]*schema{"enabled": refused(whyMemberSecurity)}
	for _, k := range []string{
		"realms", "member-authentication", "client-authentication", "client-permission-policy",
		"client-permissions", "client-block-unmapped-actions", "security-interceptors",
		"member-credentials-factory", "member-login-modules", "client-login-modules",
	} {
		keys[k] = freeNoEffect
	}
	return block(keys)
}()

var networkSchema = block(map[string]*schema{
	"public-address": inEffect,
	"port": {scalar: true, effect: true, keys: map[string]*schema{
		"port":           inEffect,
		"auto-increment": inEffect,
		"port-count":     inEffect,
	}},
	"outbound-ports": noEffect,
	"reuse-address":  noEffect,
	"join": block(map[string]*schema{
		"auto-detection": keysNoEffect("enabled"),
		"multicast": keysNoEffect("enabled", "loopback-mode-enabled", "multicast-group", "multicast-port",
			"multicast-time-to-live", "multicast-timeout-seconds", "trusted-interfaces"),
		"tcp-ip": block(map[string]*schema{
			"enabled":                    inEffect,
			"connection-timeout-seconds": noEffect,
			"required-member":            noEffect,
			"member-list":                inEffect,
			"members":                    inEffect,
			"interface":                  noEffect,
		}),
		"aws":                  freeNoEffect,
		"gcp":                  freeNoEffect,
		"azure":                freeNoEffect,
		"kubernetes":           freeNoEffect,
		"eureka":               freeNoEffect,
		"discovery-strategies": freeNoEffect,
	}),
	"interfaces": keysNoEffect("enabled", "interfaces"),
	"ssl":        memberSSLSchema,
	"socket-interceptor": block(map[string]*schema{
		"enabled":    noEffect,
		"class-name": noEffect,
		"properties": freeNoEffect,
	}),
	"symmetric-encryption": block(map[string]*schema{
		"enabled":         refused(whySymmetricEncryption),
		"algorithm":       noEffect,
		"salt":            noEffect,
		"password":        noEffect,
		"iteration-count": noEffect,
	}),
	"member-address-provider": block(map[string]*schema{
		"enabled":    noEffect,
		"class-name": noEffect,
		"properties": freeNoEffect,
	}),
	"failure-detector": freeNoEffect,
	"rest-api": block(map[string]*schema{
		"enabled":         noEffect,
		"endpoint-groups": eachOf(keysNoEffect("enabled")),
	}),
	"memcache-protocol": keysNoEffect("enabled"),
	"tpc-socket":        freeNoEffect,
})

// mapSchema is one hazelcast.map.<name> entry. Keys are checked, so that a
// misspelt map-store cannot silently leave a map without persistence.
var mapSchema = block(map[string]*schema{
	"in-memory-format":           noEffect,
	"metadata-policy":            noEffect,
	"statistics-enabled":         noEffect,
	"per-entry-stats-enabled":    noEffect,
	"cache-deserialized-values":  noEffect,
	"backup-count":               inEffect,
	"async-backup-count":         inEffect,
	"time-to-live-seconds":       inEffect,
	"max-idle-seconds":           inEffect,
	"eviction":                   freeNoEffect,
	"merge-policy":               freeNoEffect,
	"read-backup-data":           noEffect,
	"hot-restart":                freeNoEffect,
	"data-persistence":           freeNoEffect,
	"event-journal":              freeNoEffect,
	"merkle-tree":                freeNoEffect,
	"near-cache":                 freeNoEffect,
	"wan-replication-ref":        freeNoEffect,
	"indexes":                    freeNoEffect,
	"attributes":                 freeNoEffect,
	"entry-listeners":            freeNoEffect,
	"partition-lost-listeners":   freeNoEffect,
	"split-brain-protection-ref": inEffect,
	"query-caches":               freeNoEffect,
	"partition-strategy":         noEffect,
	"partition-attributes":       freeNoEffect,
	"tiered-store":               freeNoEffect,
	"user-code-namespace":        noEffect,
	"map-store": block(map[string]*schema{
		"enabled":             inEffect,
		"offload":             noEffect,
		"initial-mode":        inEffect,
		"class-name":          noEffect,
		"factory-class-name":  noEffect,
		"write-delay-seconds": inEffect,
		"write-batch-size":    inEffect,
		"write-coalescing":    inEffect,
		"properties":          freeInEffect,
	}),
})
