// Package cluster is stowage's membership and transport layer: which
// members form the cluster, which one is the master, who joined, left or
// failed, and how members call each other.
//
// It runs on hashicorp/memberlist with the LAN profile (SWIM failure
// detection with suspicion, push/pull anti-entropy over TCP, gossip over
// UDP). A member is started with [Join]; the Config mirrors hazelcast.yaml:
// cluster-name, network.port with auto-increment and port-count, and
// network.join.tcp-ip.member-list.
//
// Choices, as a Hazelcast user would expect them:
//
//   - Member ids are "host:port-<start time in Unix nanoseconds>", so a
//     member restarted on the same address is a different member.
//   - Members are ordered the way the masters admitted them: each
//     partition table carries that order (partition.Table.Order), and the
//     first live member in it is the master. When it leaves or fails, the
//     next one takes over. A member's start time (in its gossip metadata,
//     oldest first, id on a tie) ranks it only against members no table
//     admitted yet: before the first table, and among those joining, who
//     are admitted at the end. A joiner that claims an early start time
//     does not become the master (as in Hazelcast, whose master keeps the
//     member list).
//   - The cluster name travels in each member's metadata. A member whose
//     cluster-name differs is refused both when it tries to join and when
//     gossip mentions it; each refusal is logged once at Warn level with
//     both names. (memberlist's wire Label is not used: it drops such
//     packets silently, and the operator would not learn why.)
//   - A member-list entry without a port is tried on the configured port
//     and the next two, as Hazelcast does; "host:a-b" tries a port range.
//     Unreachable entries do not stop Join: a member that finds nobody
//     starts a cluster of one, and keeps retrying the member list every
//     RejoinInterval so that members started in any order, or at the same
//     moment, end up in one cluster.
//   - Join waits, within its context, until InitialMinClusterSize members
//     are visible (hazelcast.initial.min.cluster.size).
//   - Close stops the member without telling the others (they detect the
//     failure); Leave announces the departure first. Both return only when
//     every goroutine the Cluster started has stopped.
//
// Members call each other through a Transport (transport.go states what a
// call guarantees): TCPTransport keeps one TCP connection per peer with
// yamux streams, one per call, msgpack-framed, with the caller's deadline
// sent along; MemNetwork is its in-memory twin whose links tests cut and
// heal. A member's transport address and its run id (whose files it
// writes in shared storage) travel in its membership metadata.
//
// View is what the layer above needs of membership; StaticView lets a test
// script each member's view.
//
// Protocol is this member's end of the member protocol, over a View and a
// Transport: the address book and liveness of the members (a refused
// connection takes a member as gone ahead of failure detection), the
// partition table on this member (installed one version at a time; the
// master, the oldest live member, computes it with partition.Assign and
// publishes it; a newer one seen anywhere is fetched), calls to the
// others (the map operations and backups queued with Enqueue go, over
// TCP, on one pipe per member by request id, sharing their writes with
// every call and answer queued meanwhile; the pipe has a TCP connection
// of its own, authenticated like the session's and broken when the
// session closes (tcp_direct.go), or a session stream with a member that
// has none; over a transport
// without CallAsync they are batched per member and method; either way a
// call alone goes at once), the owner's lease, and one
// dispatcher. Every call's body starts with a request header (the
// sender's table version, wire.go); the dispatcher reads it and, for the
// methods registered with CheckTable, brings this member's table up to
// the caller's before the handler runs. No handler reads a header. The
// layer above registers its methods (backup, map operations) and is told
// of each new table (SetTableHooks).
//
// Imports: partition, and nothing else of stowage.
package cluster
