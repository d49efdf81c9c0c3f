// Package hdfs is the fsbackend for the Hadoop Distributed File System,
// built on github.com/colinmarc/hdfs/v2 (a pure Go client: no JVM, no
// libhdfs). Importing it registers the opener under "hdfs", which
// fsbackend.Open picks for storage.type hdfs with fs.defaultFS hdfs://...
//
// # Durability
//
// The Go client's Flush is not hflush: it pushes packets without waiting for
// the DataNode pipeline to acknowledge them. Writer.Sync is hsync instead,
// through FileWriter.Hsync (a patch in third_party/colinmarc-hdfs): the
// buffered bytes go out, the last packet asks the DataNodes to sync the
// block to disk, and Sync returns once the whole pipeline acknowledged it.
// The file stays open, and the NameNode does not learn its new length
// (Java's SyncFlag.UPDATE_LENGTH, a NameNode call per sync, is not done):
// other readers see the synced bytes once the file is closed. A file whose
// writer died stays under construction; Open reports that
// (fsbackend.UnfinishedReader, from the block locations the first read
// fetches anyway), and FS.Recover (the NameNode's recoverLease, retried
// until the file is closed by block recovery, within a heartbeat or two)
// closes it with every synced byte. Capabilities reports SyncOpen. Close
// waits for the pipeline and completes the file at the NameNode, so a file
// is durable when Writer.Sync or Writer.Close returns nil.
//
// Durable means on disk on every DataNode of the pipeline. A DataNode
// acknowledges a block it holds in its page cache only, unless it runs
// with dfs.datanode.synconclose=true (Hadoop's default is false) or the
// client asks it to sync: the Java client sets syncBlock in the header of
// a block's last packet for CreateFlag.SYNC_BLOCK and hsync, and the
// DataNode syncs the block before it acknowledges that packet. The Go
// client does this through FileWriter.SetSyncBlock, a patch carried in
// third_party/colinmarc-hdfs (PATCHES.md there); every file this back end
// writes sets it, so Close returns once each block of the file is on the
// disks of its DataNodes. stowage.hdfs.sync-on-close: false relaxes that to
// "in the DataNodes' memory" (HBase's default trade): a power loss of all
// the DataNodes of a pipeline can then lose acknowledged writes, and
// Writer.Sync is hflush (the DataNodes received the bytes). Capabilities
// reports DurableAppend false: the map store writes many callers' batches
// as new immutable files, and appends a lone writer's to a file kept open
// (SyncOpen). Close retries the NameNode's "complete" call with backoff while the last
// block is still being replicated (hdfs.IsErrReplicating), as the Java
// client does. Rename is HDFS rename2 with overwrite, atomic at the
// NameNode; Create is exclusive at the NameNode (create without the
// overwrite flag), and makes any missing parent directories first. Unlike
// the local back end, Remove keeps emptied parent directories: an operator
// may have set a quota, an owner or permissions on them, which pruning would
// silently drop. Abort closes the file and removes it.
//
// # Refused block allocations
//
// The NameNode allocates a file's third and later blocks only once the
// block before the previous one is reported by a DataNode; until then
// addBlock fails with NotReplicatedYetException. The Java client retries
// addBlock; the Go client cannot (it has already finalized and forgotten
// the previous block, and an addBlock without it is refused), so its
// FileWriter is lost. A Writer therefore keeps the bytes written so far
// and, on that refusal, waits (dfs.client.block.write.locateFollowingBlock
// .initial.delay.ms, doubling), makes a fresh file and writes the kept
// bytes again, up to .retries times for each block allocation, as long as
// the context given to Create lasts. The fresh file is created under the
// side name <name>.tmp-rewrite-<random> and at once renamed over the
// partial file (rename2 with overwrite; the open file carries on by inode),
// so the name exists throughout and a concurrent Create of it still fails
// with fs.ErrExist; only a crash between those two calls leaves the side
// file behind. Bytes are kept only while the file is at most 64 MiB, and
// only where two blocks are smaller than that (the refusal cannot happen
// earlier): with the default 128 MiB blocks nothing is kept and a refusal
// fails the write, as it does for a longer file. After a failed Write the
// file cannot be completed: Write and Close return the error again, and
// the caller should Abort.
//
// # Properties (SeaTunnel keys)
//
//	fs.defaultFS                 hdfs://host:port, or hdfs://<nameservice> for HA
//	seatunnel.hadoop.<key>       Hadoop setting <key> (highest precedence)
//	hdfs_site_path               an hdfs-site.xml (or core-site.xml) to read
//	kerberosPrincipal            with kerberosKeytabFilePath: log in with a keytab
//	kerberosKeytabFilePath
//	krb5Path                     krb5.conf (default $KRB5_CONFIG, else /etc/krb5.conf)
//	disable.cache                true: this FS gets a private client
//	stowage.hdfs.sync-on-close   false: Close does not wait for the DataNodes
//	                             to sync the blocks to disk (default true)
//
// Hadoop settings are merged from $HADOOP_CONF_DIR (core-site.xml,
// hdfs-site.xml; else $HADOOP_HOME/conf), then hdfs_site_path, then every
// seatunnel.hadoop.* key. For a logical nameservice the NameNodes are
// dfs.ha.namenodes.<ns> and dfs.namenode.rpc-address.<ns>.<nn>; the client
// tries them in order and moves on when one answers StandbyException or
// cannot be reached (that is its failover; the proxy provider class is
// checked for its nameservice but otherwise not used). HA keys that name a
// nameservice or NameNode that does not exist, or contradict each other,
// are an error that names the key. The settings the client honours:
// dfs.client.use.datanode.hostname, hadoop.security.authentication,
// dfs.namenode.kerberos.principal, dfs.data.transfer.protection,
// dfs.encrypt.data.transfer, ipc.client.connect.timeout (dial timeout, ms),
// ipc.client.rpc-timeout.ms and dfs.client.socket-timeout (per-call
// NameNode and DataNode I/O timeouts, ms), dfs.client.failover.max.attempts,
// dfs.client.failover.sleep.base.millis and dfs.client.failover.sleep.max.millis
// (how long an operation keeps retrying while no NameNode can be reached, or
// the NameNode answers RetriableException), and
// dfs.client.block.write.locateFollowingBlock.retries and .initial.delay.ms
// (how long Close keeps asking the NameNode to complete a file whose last
// block no DataNode has reported yet, after a fast first phase of ~0.6 s,
// and how often a refused block allocation is survived by a rewrite).
//
// An operation retried after a lost answer may see its own earlier effect:
// a Create whose reply was lost is retried and reports fs.ErrExist, a
// Remove reports fs.ErrNotExist. A file being written stays bound to the
// client it was created on; if that client loses every NameNode the write
// fails with an error and the caller may write the file anew.
//
// The HDFS user is seatunnel.hadoop.hadoop.user.name, else
// $HADOOP_USER_NAME, else the operating-system user; with Kerberos it is the
// principal's.
//
// # Errors
//
// Every error is an *fs.PathError naming the HDFS path. NameNode exceptions
// are mapped so that errors.Is works: ErrNameNodeUnreachable (no NameNode
// answered, or none is active), ErrSafeMode (SafeModeException),
// ErrQuotaExceeded (NSQuotaExceededException, DSQuotaExceededException),
// fs.ErrPermission (AccessControlException), fs.ErrExist, fs.ErrNotExist.
// The Java exception is kept as the wrapped cause. Errors never hold
// keytab contents or other secrets.
//
// # Client cache
//
// Clients are shared by every FS opened with the same NameNodes, user,
// Kerberos principal and client settings, through a golang-lru cache
// (64 entries). Sharing is reference counted: each FS and each open file
// holds a reference, and a client is closed when the last one is released,
// so one user's Close never breaks another's, and no goroutine outlives the
// last Close. A shared client that failed with a connection error is
// dropped from the cache and the next operation builds a new one.
//
// This differs from SeaTunnel, where the Hadoop FileSystem cache is off by
// default for HDFS because a cached FileSystem closed by one user broke the
// others; with reference counting sharing is safe, so here it is on unless
// disable.cache is true.
//
// # Context
//
// The underlying client takes no context: ctx is checked before each
// NameNode call and bounds the retries while no NameNode is reachable; a
// call in flight is bounded by the socket timeouts above.
//
// FS is safe for concurrent use; a Writer is not; a Reader is safe for
// concurrent ReadAt calls.
package hdfs
