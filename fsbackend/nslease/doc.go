// Package nslease keeps one cluster writing a namespace at a time: a lease
// on namespace/clusterName made of immutable, numbered lease records.
//
// The records lie in Dir/.stowage-lease/<20-digit number> (or the
// directory Options.Records names) and each holds
// the holding cluster's members, its renewal time and when it expires.
// Record n+1 is created only with the back end's conditional create
// (O_EXCL on local disk, HDFS create, S3 If-None-Match: *, OSS
// x-oss-forbid-overwrite, GCS ifGenerationMatch=0), so of two writers
// that both read record n, exactly one makes n+1: taking the lease over
// and renewing it are one atomic step on every back end, with no lock
// service and no rewrite of an existing object.
//
// A member starting on the namespace (Acquire) reads the newest record:
//   - none, a released one, or one of its own cluster (Options.Same: the
//     record names an address one of its live members holds): it takes
//     the lease by creating the next record;
//   - another cluster's record: it watches the records until the other
//     cluster renews (it is live: Acquire fails with an *HeldError that
//     names the path and the other members) or the record has expired and
//     stayed the newest for a full TTL on this member's monotonic clock
//     (its holder is gone, or fenced: taken over). So a member started
//     after a kill -9 of the whole other side waits about one to two
//     TTLs, and a live cluster is found in about TTL/4.
//
// The Lease renews every TTL/4 while Options.Renew says this member
// should (the cluster's master), and Close of the last member releases it
// so that another cluster may start at once. Every member's Lease also
// follows the records (fence.go): Check refuses writes once this member
// has not seen its cluster renew for 3/4 TTL, strictly before any other
// cluster can take the lease over, on monotonic clocks only.
package nslease
