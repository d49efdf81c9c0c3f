package config

import "strings"

// ClientFile is the client configuration's file name.
const ClientFile = "hazelcast-client.yaml"

// Client is hazelcast-client.yaml's hazelcast-client block, what a client
// of the cluster (a job submitter, `stowage inspect` against a live
// cluster) needs to find it. Safe for concurrent reads.
type Client struct {
	// ClusterName is cluster-name; it must equal the members'. Default
	// "seatunnel".
	ClusterName string
	// ClusterMembers is network.cluster-members: host or host:port of
	// members to connect to. Default empty.
	ClusterMembers []string
	// Properties is properties (hazelcast.logging.type, ...). Default
	// empty.
	Properties map[string]string
}

var clientSchema = func() *schema {
	keys := map[string]*schema{}
	for _, s := range []string{
		"backup-ack-to-client-enabled", "client-labels", "config-replacers", "connection-strategy",
		"flake-id-generator", "import", "instance-tracking", "listeners", "load-balancer", "metrics",
		"native-memory", "near-cache", "proxy-factories", "query-caches", "reliable-topic",
		"security", "serialization", "sql", "tpc", "user-code-deployment",
	} {
		keys[s] = free
	}
	keys["cluster-name"] = nil
	keys["instance-name"] = nil
	keys["properties"] = free
	keys["network"] = block(map[string]*schema{
		"cluster-members": nil, "smart-routing": nil, "redo-operation": nil,
		"connection-timeout": nil, "outbound-ports": nil, "socket-options": free,
		"socket-interceptor": free, "ssl": free, "aws": free, "gcp": free, "azure": free,
		"kubernetes": free, "eureka": free, "discovery-strategies": free,
		"auto-detection": free, "hazelcast-cloud": free, "icmp-ping": free,
		"cluster-routing": free, "subset-routing": free,
	})
	return block(keys)
}()

// ParseClient reads the contents of hazelcast-client.yaml. nil or empty
// data gives the defaults. Errors are *Error naming the file, line and key.
func ParseClient(data []byte) (*Client, error) {
	c := &Client{ClusterName: DefaultClusterName, Properties: map[string]string{}}
	root, err := parseRoot(data, ClientFile)
	if err != nil {
		return nil, err
	}
	es, err := root.entries()
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if e.key != "hazelcast-client" {
			return nil, e.val.fail(ErrUnknownKey, "unknown top-level key (hazelcast-client.yaml holds one block, hazelcast-client)")
		}
		if err := e.val.check(clientSchema); err != nil {
			return nil, err
		}
		var r reader
		r.str(&c.ClusterName, e.val.child("cluster-name"))
		if r.err != nil {
			return nil, r.err
		}
		c.ClusterName = strings.TrimSpace(c.ClusterName)
		members, err := e.val.child("network").child("cluster-members").list()
		if err != nil {
			return nil, err
		}
		c.ClusterMembers = append(c.ClusterMembers, members...)
		props := map[string]string{}
		if err := e.val.child("properties").props(props, ""); err != nil {
			return nil, err
		}
		for k, v := range props {
			c.Properties[k] = v
		}
	}
	if c.ClusterName == "" {
		return nil, &Error{File: ClientFile, Key: "hazelcast-client.cluster-name", Err: kinded(ErrInvalid, "must not be empty")}
	}
	return c, nil
}
