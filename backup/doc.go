// Package backup is replication: everything that moves a partition's data
// between members. It sends an owner's records to the partition's sync
// and async backups and waits for the sync ones (Send, Sent.Wait,
// Sent.Revert), applies and reverts records on a backup, fills backups
// (whole partitions, or one map's part), refills them when the table
// changes or one lost records, takes partitions over with a new epoch
// (promotion of a backup's copy, hand-over by the previous owner, or the
// map stores) and releases the copies no longer needed. It answers the
// other members' backup, revert, fill, status, take and release calls.
//
// It sees records as bytes and never a map's typed values or the map
// engine's types: what it needs of the maps is the Holder interface,
// which the map engine (internal/dmap) implements — the idea of
// Hazelcast's MigrationAwareService and olric's Fragment. The state of
// each partition on this member is a partition.Replica; the member
// protocol (calls, the table, the dispatcher) is cluster.Protocol.
//
// A PUT, on the owner: the map engine orders the write and gives it a
// version, then calls Send (the record goes to the sync backups, batched
// per member by the protocol) while it writes its map store; Wait returns
// once every sync backup applied it, refused it (the write changed nothing
// and is routed again), or left the replica set. A backup applies a record
// only from the owner its table names, of the owner's epoch, onto a whole
// copy (else it asks for a fill).
//
// A fail-over: the table names a new owner; Replica.OnTable starts an
// acquisition; the new owner asks every live member what it holds of the
// partition (status: answering installs the asker's newer table, so an old
// owner stops), takes the best copy (highest epoch, then owner before
// backup), lets the Holder install it and start an epoch above every one
// seen and grown with the table version, records the epoch starts durably,
// writes again what a backup applied beyond a gap, fills every backup,
// releases the other holders and only then serves the partition.
//
// A member that already holds a copy of a partition (a backup back from
// a cut, a demoted owner, a backup made owner) is sent a delta instead of
// the whole data: only the entries of the key buckets whose sums differ
// from its copy's digest, checked against that digest again when it
// installs (delta.go, fill_delta.go).
//
// Imports: cluster, partition, mapstore (versions), and nothing above.
package backup
