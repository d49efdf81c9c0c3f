// Package mapstore defines the MapStore contract (Hazelcast's MapStore and
// MapLoader, as SeaTunnel's FileMapStore uses them) and holds the map
// stores: the file map store in filestore (group-committed log, per-partition
// snapshots from memory, compaction, EAGER load) on any fsbackend, and the
// embedded bbolt store in boltstore. mapstoretest is the contract suite
// both pass.
package mapstore
