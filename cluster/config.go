package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hashicorp/memberlist"
)

// Config configures one member. Zero values take the defaults listed on
// each field. A Config is copied by Join; changing it afterwards has no
// effect.
type Config struct {
	// ClusterName is hazelcast.cluster-name; required. Members with
	// different names refuse each other.
	ClusterName string
	// BindAddr is the address to listen on and advertise; default
	// 127.0.0.1.
	BindAddr string
	// Port is network.port; default 5801. TCP and UDP are both bound.
	Port int
	// PortAutoIncrement is network.port.auto-increment: when Port is
	// taken, try the next ones.
	PortAutoIncrement bool
	// PortCount is network.port.port-count, how many ports auto-increment
	// may try; default 100.
	PortCount int
	// MemberList is network.join.tcp-ip.member-list: "host", "host:port"
	// or "host:first-last". The member's own address is skipped.
	MemberList []string
	// RPCAddr is the address of this member's Transport, published in
	// its metadata so that the others can call it; "" for none.
	RPCAddr string
	// Run is this member run's id in shared storage, published so that
	// the others know whose files are still being written.
	Run string
	// InitialMinClusterSize is hazelcast.initial.min.cluster.size: Join
	// returns once this many members (itself included) are visible.
	// Default 1.
	InitialMinClusterSize int
	// GossipKey, when set (16, 24 or 32 bytes, e.g. Security.GossipKey),
	// encrypts and authenticates every memberlist message, both ways: a
	// node without the key is neither heard nor answered.
	GossipKey []byte
	// Logger receives membership events and memberlist's own log lines;
	// nil discards them.
	Logger *slog.Logger
	// GossipBytes, if set, is told the size of every packet and stream
	// chunk the membership layer sends or receives (failure detection,
	// gossip, push/pull state exchange): for measuring its traffic.
	GossipBytes func(n int)

	// Timing overrides the LAN profile's failure-detection timing; zero
	// fields keep memberlist's DefaultLANConfig values (probe every 1 s,
	// 500 ms probe timeout, suspicion multiplier 4, gossip every 200 ms,
	// push/pull every 30 s, 10 s TCP timeout). Tests shorten them.
	Timing Timing
}

// Timing is the failure-detection and retry timing of a member.
type Timing struct {
	ProbeInterval    time.Duration
	ProbeTimeout     time.Duration
	SuspicionMult    int
	GossipInterval   time.Duration
	PushPullInterval time.Duration
	TCPTimeout       time.Duration
	// RejoinInterval is how often the member list is tried again for
	// addresses that are not members; default 10 s. Negative disables it.
	RejoinInterval time.Duration
}

// DetectionFloor is the least time memberlist can take from a member's
// last answer to declaring it dead with this timing: a probe's timeout,
// then the shortest suspicion timeout (SuspicionMult probe intervals; it
// only grows with the cluster's size, and confirmations shorten it to no
// less than that).
func (t Timing) DetectionFloor() time.Duration {
	lan := memberlist.DefaultLANConfig()
	probe, timeout, mult := lan.ProbeInterval, lan.ProbeTimeout, lan.SuspicionMult
	if t.ProbeInterval > 0 {
		probe = t.ProbeInterval
	}
	if t.ProbeTimeout > 0 {
		timeout = t.ProbeTimeout
	}
	if t.SuspicionMult > 0 {
		mult = t.SuspicionMult
	}
	return timeout + time.Duration(mult)*probe
}

// DefaultPort is Hazelcast's network.port as SeaTunnel ships it.
const DefaultPort = 5801

// portTries is how many ports are tried for a member-list entry without
// a port (hazelcast.tcp.join.port.try.count).
const portTries = 3

func (c Config) withDefaults() Config {
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1"
	}
	if c.Port == 0 {
		c.Port = DefaultPort
	}
	if c.PortCount == 0 {
		c.PortCount = 100
	}
	if c.InitialMinClusterSize == 0 {
		c.InitialMinClusterSize = 1
	}
	if c.Timing.RejoinInterval == 0 {
		c.Timing.RejoinInterval = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks the configuration, naming the offending hazelcast.yaml
// key.
func (c Config) Validate() error {
	var errs []error
	if c.ClusterName == "" {
		errs = append(errs, errors.New("stowage/cluster: cluster-name is empty"))
	}
	if len(c.RPCAddr) > 255 {
		errs = append(errs, fmt.Errorf("stowage/cluster: transport address %q is too long", c.RPCAddr))
	}
	if len(c.ClusterName) > 255 {
		errs = append(errs, fmt.Errorf("stowage/cluster: cluster-name is %d bytes long; at most 255", len(c.ClusterName)))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("stowage/cluster: network.port %d out of range", c.Port))
	}
	if c.PortCount < 0 {
		errs = append(errs, fmt.Errorf("stowage/cluster: network.port.port-count %d is negative", c.PortCount))
	}
	if c.InitialMinClusterSize < 0 {
		errs = append(errs, fmt.Errorf("stowage/cluster: hazelcast.initial.min.cluster.size %d is negative", c.InitialMinClusterSize))
	}
	if n := len(c.GossipKey); n != 0 && n != 16 && n != 24 && n != 32 {
		errs = append(errs, fmt.Errorf("stowage/cluster: gossip key is %d bytes; 16, 24 or 32", n))
	}
	for _, e := range c.MemberList {
		if _, err := expand(e, c.Port); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
