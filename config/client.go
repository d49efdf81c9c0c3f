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

	ignored []string
}

// Ignored lists the keys of the file that stowage accepts but does not act
// on, as dotted key paths in file order (see Config.Ignored).
func (c *Client) Ignored() []string { return append([]string(nil), c.ignored...) }

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
		if err := e.val.check(clientSchema, true); err != nil {
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
	c.ignored = root.src.noEffect
	if c.ClusterName == "" {
		return nil, &Error{File: ClientFile, Key: "hazelcast-client.cluster-name", Err: kinded(ErrInvalid, "must not be empty")}
	}
	return c, nil
}
