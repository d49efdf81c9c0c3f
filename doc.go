// Package stowage keeps a stream-processing engine's cluster state safe:
// partitioned in-memory maps that write through to a map store on shared
// storage and load EAGERly on start, so that state comes back by itself
// after every member was stopped. It is the Go counterpart of Apache
// SeaTunnel's engine persistence (Hazelcast IMap + FileMapStore), configured
// by the same seatunnel.yaml and hazelcast.yaml.
//
// Open a Node from a parsed configuration, then a typed Map:
//
//	cfg, _ := config.Load("/opt/seatunnel/config")
//	node, _ := stowage.Open(ctx, stowage.Options{Config: cfg})
//	defer node.Close()
//	jobs, _ := stowage.GetMap(ctx, node, "engine_runningJobInfo", serde.String(), serde.Bytes())
//	err := jobs.Put(ctx, "job-1", state) // returns once durable
//
// Maps whose names match a hazelcast.yaml map entry with an enabled
// map-store are persisted (package mapstore/filestore on any fsbackend, or
// bbolt); others live in memory only. Every write is given a version
// (epoch, sequence) per partition; at most one write per key is in flight,
// writes of different keys share group commits.
//
// Node.Handler serves the HTTP surface of `stowage node`.
package stowage
