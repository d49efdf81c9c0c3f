package config

// The keys of hazelcast-client.yaml (Hazelcast 5's client schema).
// stowage reads cluster-name and network.cluster-members into Client;
// every other key is accepted and reported as having no effect.
var clientSchema = func() *schema {
	keys := map[string]*schema{}
	for _, s := range []string{
		"backup-ack-to-client-enabled", "client-labels", "config-replacers",
		"flake-id-generator", "import", "instance-tracking", "listeners", "load-balancer", "metrics",
		"native-memory", "near-cache", "proxy-factories", "query-caches", "reliable-topic",
		"security", "serialization", "sql", "tpc", "user-code-deployment",
	} {
		keys[s] = freeNoEffect
	}
	keys["cluster-name"] = inEffect
	keys["instance-name"] = noEffect
	keys["properties"] = &schema{props: clientProperties}
	keys["connection-strategy"] = block(map[string]*schema{
		"async-start":    noEffect,
		"reconnect-mode": noEffect,
		"connection-retry": keysNoEffect("initial-backoff-millis", "max-backoff-millis", "multiplier",
			"cluster-connect-timeout-millis", "jitter"),
	})
	keys["network"] = block(map[string]*schema{
		"cluster-members": inEffect, "smart-routing": noEffect, "redo-operation": noEffect,
		"connection-timeout": noEffect, "outbound-ports": noEffect,
		"socket-options":     keysNoEffect("tcp-no-delay", "keep-alive", "reuse-address", "linger-seconds", "buffer-size"),
		"socket-interceptor": freeNoEffect,
		"ssl": block(map[string]*schema{
			"enabled":            refused(whyClientTLS),
			"factory-class-name": noEffect,
			"properties":         freeNoEffect,
		}),
		"aws": freeNoEffect, "gcp": freeNoEffect, "azure": freeNoEffect,
		"kubernetes": freeNoEffect, "eureka": freeNoEffect, "discovery-strategies": freeNoEffect,
		"auto-detection": freeNoEffect, "hazelcast-cloud": freeNoEffect, "icmp-ping": freeNoEffect,
		"cluster-routing": freeNoEffect, "subset-routing": freeNoEffect,
	})
	return block(keys)
}()
