// Package checkpoint is the engine's checkpoint storage: the Go counterpart
// of SeaTunnel's checkpoint-storage-api (CheckpointStorage plus
// CheckpointStorageFactory, a microkernel) and of checkpoint-storage-hdfs,
// on every stowage back end (local disk, HDFS, OSS, S3, COS, GCS).
//
// # Using it
//
// An engine builds its storage from the seatunnel.engine.checkpoint.storage
// block through the factory registry:
//
//	import _ "github.com/stowage/stowage/fsbackend/local" // back ends register by import
//
//	st, err := checkpoint.New(ctx, "hdfs", checkpoint.FactoryOptions{
//		Namespace:   "/seatunnel/checkpoint/",
//		MaxRetained: 3,
//		Properties:  fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"},
//	})
//
// or directly on an fsbackend.FS with Open. Storage mirrors
// CheckpointStorage: store (sync and async), all checkpoints of a job,
// latest per pipeline, latest of one pipeline, list of one pipeline, get
// one, delete (job, one, list).
//
// # Factories
//
// "hdfs" is the storage for every plugin-config storage.type: it opens the
// back end with fsbackend.Open and stores files there. "localfile" is
// SeaTunnel's deprecated local storage; it logs a warning and behaves like
// hdfs with fs.defaultFS file:///. Users add their own storage with
// Register from an init function (see ExampleRegister) and select it with
// seatunnel.engine.checkpoint.storage.type, which package config accepts
// for any well-formed name; their factory receives plugin-config as
// written. New with an unknown name fails naming that key and the value
// and listing the registered names.
//
// # Layout and format
//
// A checkpoint is one file <namespace><jobId>/p<pipeline, 10 digits>-c<id,
// 19 digits>.ckpt, so names sort by pipeline and checkpoint id and ids are
// known from a listing alone. Job ids may not be empty or hold "/", "\",
// "..", or NUL (ErrInvalidJobID). The file is a sequence of CRC-32C frames
// (serde/record): a header (format version, job, pipeline, checkpoint id,
// state length, chunk count, creation time), the state in chunks of at most
// 16 MiB, and a trailer repeating the length with a CRC-32C of the whole
// state. Reading is strict: anything else is damage. FORMAT.md has the
// byte-level description.
//
// Files are written atomically: to "<name>.tmp-<random>" and renamed where
// the back end renames atomically (local, HDFS), otherwise by a conditional
// create of the final name (one PUT on object stores). A reader therefore
// sees a whole checkpoint or none; a crash leaves at most a temporary file,
// which is never read and is removed by retention or DeleteCheckpoint.
// The state is written from the caller's slice, not copied. Storing a
// checkpoint id again with the same state succeeds (a retried store); with
// a different state it fails with ErrExists, as SeaTunnel's rename onto an
// existing file did.
//
// # The latest directory
//
// Each job has a directory <namespace><jobId>/latest/ of empty files whose
// names say what they mean: a marker per pipeline that has checkpoints, a
// pointer per pipeline at its latest checkpoint id, "complete" once every
// pipeline has its marker, and "deleting" while the job is deleted
// (FORMAT.md lists them). It holds a few files per pipeline however many
// checkpoints are kept, so finding the latest checkpoint of a pipeline
// costs one listing of it, one Stat and one read, and of a job the same
// per pipeline: it does not grow with the job.
//
// A pointer is moved after its checkpoint is stored and needs no sync of
// its own: a lookup also Stats the ids that follow the pointer's one by
// one (normally one Stat, which finds nothing), so a checkpoint stored just
// before a crash that kept its pointer from moving is still the answer.
// A store whose id does not follow the pointer's (a gap, which probing
// would not cross) first writes, and syncs, a pointer that says to list,
// so that a lookup is never older than the newest complete checkpoint. A
// pointer that is missing, says to list, or leads to a missing or damaged
// checkpoint sends the lookup to the listing of the job, as before; the
// next store puts a right pointer back. A job written before the latest
// directory existed is found by listing until its next store adds it.
//
// # Latest, damage and retention
//
// "Latest" is the highest checkpoint id, never the newest clock time; the
// creation time in the file is information only. If the latest checkpoint
// is damaged (bad CRC, truncated, header not matching its name) the
// storage logs a warning, calls Options.OnDamage, and returns the next
// lower checkpoint that reads clean, where SeaTunnel's restore failed.
// Verify lists such files for operators.
//
// MaxRetained N keeps the newest N checkpoints per pipeline (0 means
// DefaultMaxRetained, 20, SeaTunnel's default and package config's;
// KeepAll keeps all). After each store the storage lists the job's files,
// checks the new file's size, header and trailer, and only then deletes
// those beyond the newest N, so the limit holds across restarts with no
// counter kept in memory. A failed deletion is logged and redone by the
// next store; it does not fail the store.
//
// # Syncs, and deleting
//
// On back ends where a directory's entries become durable only when it is
// synced (the local disk: fsbackend.DirSyncer) a store syncs the
// checkpoint's bytes, renames it into place, moves the pointer, retires
// the checkpoints beyond retention (renamed out of the way) and syncs the
// job's directory once before it returns. The last retired file of a job
// is kept as a spare that the job's next store writes over in place
// (fsbackend.Recycler) instead of creating a file, so that a store with
// retention neither frees nor allocates blocks; other retired files are
// unlinked by a background goroutine that Close waits for, and Close
// deletes the spares. Elsewhere every call is durable when it returns.
//
// Where the back end's recursive delete is atomic (HDFS: one NameNode
// transaction; fsbackend.RemovesAtomically), DeleteCheckpoint is that one
// call on the job's directory: the job is wholly there or wholly gone,
// whatever stops the call, so it needs no marker. On the local disk
// (fsbackend.DirRenamer) DeleteCheckpoint moves the job's directory into
// the namespace's trash directory (..trash/) under a new name, one rename
// and two directory syncs, after which no lookup finds the job; its files
// are unlinked there in the background, sixteen at a time and with no
// sync after (WaitBackground and Close wait for it), and what a crash
// leaves there the first store or delete of the next storage unlinks.
// Elsewhere (object stores delete files in batches, not atomically)
// DeleteCheckpoint writes and syncs the "deleting" marker in the job's
// latest directory and the job's mark in the namespace's deletion
// directory (..deleting/), empties the latest directory but for its
// marker, removes the job's directory with one recursive delete where the
// back end has one (fsbackend.RemoveAll: batches on S3 and OSS) and
// syncs its parent once, and removes the mark last. Lookups treat
// a job with either mark as having no checkpoints, so a deletion that
// stopped midway (an error, a crash) returns nothing half deleted; the
// next DeleteCheckpoint or store of the job, or the first store or delete
// of a restarted storage, finishes it.
//
// Stores and deletes of one job through one FileStorage take turns; a
// job's checkpoints have one writer (one FileStorage, in one process) at a
// time, as SeaTunnel's checkpoint coordinator is.
//
// # One cluster per namespace
//
// Two clusters writing one namespace would delete each other's
// checkpoints by retention and job deletes. A stowage.Node opening its
// checkpoint storage (Node.OpenCheckpointStorage) therefore holds a
// namespace lease (package fsbackend/nslease) of the checkpoint namespace
// itself: its records lie in <namespace>..stowage-lease/ (LeaseRecords;
// the name holds "..", so no job id is ever it, and inspection skips it).
// The members of one cluster share the lease and its master renews it; a
// member of another live cluster is refused with an *nslease.HeldError
// naming the namespace and the holder's members; the same cluster
// restarted on its addresses takes it at once. It is not the map store's
// lease, even when both use one back end: the map store's lease is of
// namespace/clusterName (hazelcast.yaml), the checkpoints' of the
// plugin-config namespace (seatunnel.yaml), which has no clusterName, and
// two clusters with different clusterNames on one checkpoint namespace
// must be told apart too. Options.Fence (FactoryOptions.Fence) is how the
// lease reaches the storage: stores and deletes, and the background
// removal of retired checkpoints and deleted jobs, are refused (ErrFenced,
// and the fence's error: stowage.ErrNamespaceLeaseLost) while the member
// cannot tell that its cluster still holds the lease, before any other
// cluster can take it over. Open and New alone take no lease; nor does
// stowage.OpenCheckpointStorage, which is for tools and tests; a
// storage of a factory a user registered gets none (stowage does not know
// where it writes).
//
// # Asynchronous stores
//
// AsyncStoreCheckpoint queues a store on a bounded queue (Options.AsyncQueue)
// served by Options.AsyncWorkers goroutines and returns a Pending, through
// which the result is reported; a failure is never only logged. When the
// queue is full the call blocks until there is room or its context is done
// (the Pending then fails with the context's error). Close fails submitters
// still blocked with ErrClosed, completes every queued store, and returns
// once all goroutines have ended.
//
// # Inspection
//
// Inspect, List, Show and Verify read a namespace directly from an
// fsbackend.FS, without a Storage, and return structs with JSON tags; they
// back `stowage inspect checkpoints list [JOB] | show JOB PIPELINE
// [CHECKPOINT] | verify`. Show finds the latest checkpoint exactly as the
// storage does.
//
// Every exported type is safe for concurrent use unless its doc says
// otherwise. The reusable scenario suite for back ends is in checkpointtest.
package checkpoint
