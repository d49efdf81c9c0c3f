package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// Config is a whole engine configuration: seatunnel.yaml's seatunnel.engine
// block and hazelcast.yaml's hazelcast block. Default returns a fresh one.
// A Config is a plain value: safe for concurrent reads, and it must not be
// modified once handed to a node.
type Config struct {
	Engine    Engine    // seatunnel.engine (seatunnel.yaml)
	Hazelcast Hazelcast // hazelcast (hazelcast.yaml)

	// origin remembers the files and key lines the values came from, so
	// that Validate can point at them; nil for a configuration built in code.
	origin *origin
	// ignored are the keys of the files that stowage does not act on.
	ignored []string
}

// Ignored lists the keys present in the files that stowage accepts but
// does not act on (SeaTunnel's job engine settings, the REST API,
// telemetry, Hazelcast tuning properties, ...), as dotted key paths such
// as seatunnel.engine.http or hazelcast.properties.hazelcast.logging.type,
// seatunnel.yaml's first, each in file order. A block none of whose keys
// stowage reads is listed once by its own path. Keys with no value are
// not listed. A node logs the list once at start. Nil for a configuration
// built in code.
func (c *Config) Ignored() []string { return append([]string(nil), c.ignored...) }

type origin struct {
	seatunnelFile, hazelcastFile string
	lines                        map[string]int
}

// Engine is seatunnel.engine. Values stowage does not act on are kept so
// that a node can report them; blocks SeaTunnel has that stowage has no use
// for (http, telemetry, jar-storage, event-report-http, coordinator-service)
// are checked for unknown keys and otherwise ignored.
type Engine struct {
	// BackupCount is backup-count: synchronous backups of each partition,
	// 0..6. Default 1.
	BackupCount int
	// QueueType is queue-type: blockingqueue or disruptor. Default
	// blockingqueue.
	QueueType string
	// PrintExecutionInfoInterval is print-execution-info-interval, in
	// seconds. Default 60.
	PrintExecutionInfoInterval int
	// PrintJobMetricsInfoInterval is print-job-metrics-info-interval, in
	// seconds. Default 60.
	PrintJobMetricsInfoInterval int
	// JobMetricsBackupInterval is job-metrics-backup-interval, in seconds.
	// Default 10.
	JobMetricsBackupInterval int
	// HistoryJobExpireMinutes is history-job-expire-minutes: how long a
	// finished job's record is kept. Default 1440 (one day). The engine
	// writes finished jobs' state, metrics and DAG with this time to live
	// (stowage.Node.HistoryJobTTL, passed to Map.PutWithTTL).
	HistoryJobExpireMinutes int
	// ClassloaderCacheMode is classloader-cache-mode. Default false, as
	// the deployment guide states.
	ClassloaderCacheMode bool
	// SlotService is slot-service.
	SlotService SlotService
	// Checkpoint is checkpoint.
	Checkpoint Checkpoint
	// HTTP is http: TLS and authentication of the HTTP API
	// (http_security.go).
	HTTP HTTP
}

// SlotService is seatunnel.engine.slot-service.
type SlotService struct {
	// DynamicSlot is dynamic-slot: no fixed number of slots. Default true.
	DynamicSlot bool
	// SlotNum is slot-num, used when dynamic-slot is false. Default 2.
	SlotNum int
}

// Checkpoint is seatunnel.engine.checkpoint.
type Checkpoint struct {
	// Interval is interval, given in milliseconds. Default 300000 (5 min).
	Interval time.Duration
	// Timeout is timeout, given in milliseconds. Default 30000, as
	// SeaTunnel's ServerConfigOptions (the guide's example uses 10000).
	Timeout time.Duration
	// Storage is storage.
	Storage CheckpointStorage
}

// CheckpointStorage is seatunnel.engine.checkpoint.storage.
type CheckpointStorage struct {
	// Type is type: the name of the checkpoint storage factory, "hdfs"
	// (the default here; it serves every storage.type), "localfile"
	// (SeaTunnel's deprecated alias, kept as written so that the caller
	// can warn) or one a user registered with checkpoint.Register. It is
	// lower-cased. Validate accepts any well-formed name
	// (ValidCheckpointStorageName); a name no factory has fails when the
	// storage is built.
	Type string
	// MaxRetained is max-retained: completed checkpoints kept per job
	// pipeline. Default 20, as SeaTunnel's ServerConfigOptions (releases
	// before 2.3.9 defaulted to 1).
	MaxRetained int
	// Namespace is plugin-config.namespace: the parent path of all
	// checkpoints, always ending in "/" (a missing one is added, with a
	// warning). Default /seatunnel/checkpoint/.
	Namespace string
	// PluginConfig is the whole plugin-config block as strings
	// (storage.type, fs.defaultFS, oss.bucket, fs.oss.*, s3.bucket,
	// fs.s3a.*, cos.bucket, fs.cosn.*, gcs.bucket, fs.gs.*,
	// kerberosPrincipal, kerberosKeytabFilePath, seatunnel.hadoop.*,
	// disable.cache, ...). Keys with no value are left out; namespace,
	// when given, holds the normalised value. Validate checks the
	// back-end keys only for the built-in types hdfs and localfile; a
	// factory of the user's own receives them unchecked.
	PluginConfig fsbackend.Properties
}

// Hazelcast is hazelcast.yaml's hazelcast block.
type Hazelcast struct {
	// ClusterName is cluster-name: members and clients of another name
	// are refused. Default "seatunnel".
	ClusterName string
	// Network is network.
	Network Network
	// Properties is properties: Hazelcast settings such as
	// hazelcast.initial.min.cluster.size, hazelcast.logging.type,
	// hazelcast.max.no.heartbeat.seconds. Default empty.
	Properties map[string]string
	// Maps are the map.<name or pattern> entries, in file order. None
	// means no map is persisted.
	Maps []MapConfig
	// SplitBrainProtection is split-brain-protection: named minimum
	// cluster sizes that maps refer to by split-brain-protection-ref.
	SplitBrainProtection map[string]SplitBrainProtection
}

// SplitBrainProtection is one hazelcast.split-brain-protection.<name>
// entry: below MinimumClusterSize live members, the operations named by
// ProtectOn on the maps that refer to it fail.
type SplitBrainProtection struct {
	// Enabled is enabled. Default false, as Hazelcast's.
	Enabled bool
	// MinimumClusterSize is minimum-cluster-size; at least 2.
	MinimumClusterSize int
	// ProtectOn is protect-on, upper-cased: READ, WRITE or READ_WRITE
	// (the default).
	ProtectOn string
}

// Network is hazelcast.network. Its other keys (rest-api, interfaces,
// ssl, join.multicast, ...) are accepted and not used.
type Network struct {
	// Port is port.port, or port when written as a single value
	// (`port: 5801`). Default 5801.
	Port int
	// PortAutoIncrement is port.auto-increment: try the next ports when
	// Port is taken. Default false, as SeaTunnel ships hazelcast.yaml
	// (Hazelcast's own default is true).
	PortAutoIncrement bool
	// PortCount is port.port-count: how many ports auto-increment tries.
	// Default 100.
	PortCount int
	// TCPIPEnabled is join.tcp-ip.enabled: join the members of
	// MemberList. Default false: the member runs alone.
	TCPIPEnabled bool
	// PublicAddress is public-address: the host (or host:port) other
	// members reach this one at. Default: 127.0.0.1 when every
	// member-list entry is a loopback address, else the host's first
	// non-loopback address.
	PublicAddress string
	// MemberList is join.tcp-ip.member-list (or members): host, host:port
	// or a comma-separated list of them. Default empty.
	MemberList []string
	// SSL is ssl: member authentication and encryption
	// (member_security.go).
	SSL MemberSSL
}

// MapConfig is one hazelcast.map.<name> entry.
type MapConfig struct {
	// Pattern is the entry's name: a map name, a pattern with one '*'
	// (engine*), or "default".
	Pattern string
	// BackupCount is backup-count: synchronous backups, 0..6. Default 1;
	// when the entry does not set it, seatunnel.engine.backup-count
	// applies (see SyncBackups).
	BackupCount int
	// AsyncBackupCount is async-backup-count. Default 0. BackupCount +
	// AsyncBackupCount is at most 6.
	AsyncBackupCount int
	// SplitBrainProtectionRef is split-brain-protection-ref: the name of
	// a hazelcast.split-brain-protection entry, or "".
	SplitBrainProtectionRef string
	// TimeToLiveSeconds is time-to-live-seconds: an entry written without
	// a time to live of its own expires this long after the write (0,
	// the default: never). MaxIdleSeconds is max-idle-seconds: an entry
	// not read or written for this long expires (0: never); the access
	// time is kept by the partition's owner only (see internal/dmap).
	TimeToLiveSeconds int
	MaxIdleSeconds    int

	backupCountSet bool
	// MapStore is map-store; nil when the entry has none.
	MapStore *MapStoreConfig
}

// SyncBackups is the map's synchronous backup count: backup-count when
// the entry sets it, else the engine's (seatunnel.engine.backup-count).
func (m MapConfig) SyncBackups(engine int) int {
	if m.backupCountSet {
		return m.BackupCount
	}
	return engine
}

// MapStoreConfig is a map's map-store block.
type MapStoreConfig struct {
	// Enabled is enabled. Default true, as Hazelcast's, once the block
	// is present.
	Enabled bool
	// InitialMode is initial-mode, upper-cased: EAGER (load everything
	// on start) or LAZY (load on first use). Default LAZY, as Hazelcast.
	InitialMode string
	// FactoryClassName is factory-class-name (SeaTunnel's
	// org.apache.seatunnel.engine.server.persistence.FileMapStoreFactory);
	// kept, not used.
	FactoryClassName string
	// ClassName is class-name; kept, not used.
	ClassName string
	// WriteDelaySeconds is write-delay-seconds. Default 0 (write-through:
	// a write is acknowledged once it is durable); more than 0 is
	// write-behind, see docs/write-behind.md.
	WriteDelaySeconds int
	// WriteBatchSize is write-batch-size: with write-behind, the most
	// records one store call gets. Default 1. Without write-behind it has
	// no effect: writes are group-committed regardless.
	WriteBatchSize int
	// WriteCoalescing is write-coalescing: with write-behind, only a key's
	// latest write stays queued. Default true; no effect without
	// write-behind.
	WriteCoalescing bool
	// Properties is properties as strings: type (hdfs | bbolt),
	// namespace, clusterName, storage.type, fs.defaultFS, block.size,
	// oss.bucket, fs.oss.*, s3.bucket, fs.s3a.*, ..., path (bbolt).
	Properties fsbackend.Properties
}

// Map store types: the values of map-store.properties.type.
const (
	StoreHDFS  = "hdfs"  // the file map store on any storage.type (SeaTunnel's FileMapStore)
	StoreBBolt = "bbolt" // one embedded bbolt file, for a single member
)

// StoreType is properties.type, lower-cased; "hdfs" when unset.
func (m MapStoreConfig) StoreType() string {
	return strings.ToLower(m.Properties.Get("type", StoreHDFS))
}

// Namespace is properties.namespace: the directory under which the
// map's data lives, at namespace/clusterName/<map name>/.
func (m MapStoreConfig) Namespace() string { return m.Properties.Get("namespace", "") }

// ClusterName is properties.clusterName: the directory that keeps one
// cluster's maps apart from another's.
func (m MapStoreConfig) ClusterName() string { return m.Properties.Get("clusterName", "") }

// BlockSize is properties.block.size in bytes, or 0 when unset (the
// back end's default).
func (m MapStoreConfig) BlockSize() (int64, error) {
	s := m.Properties.Get("block.size", "")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, &Error{Key: "block.size", Err: kinded(ErrInvalid, fmt.Sprintf("%q is not a positive number of bytes", s))}
	}
	return n, nil
}

// KeyCommitDelay is the map-store property that bounds how long the
// group commit of a local disk, or of HDFS's open log file, waits for more
// writers before it syncs a batch: a Go duration from 0 (never wait) to
// MaxCommitDelay; unset, the file store's default.
const KeyCommitDelay = "stowage.commit-delay"

// MaxCommitDelay is the longest commit delay a map store may be given.
const MaxCommitDelay = 100 * time.Millisecond

// CommitDelay is properties.stowage.commit-delay as the file store takes
// it: 0 when unset (its default), a negative duration when set to 0
// (never wait), else the duration.
func (m MapStoreConfig) CommitDelay() (time.Duration, error) {
	s := m.Properties.Get(KeyCommitDelay, "")
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if s == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 || d > MaxCommitDelay {
		return 0, &Error{Key: KeyCommitDelay, Err: kinded(ErrInvalid, fmt.Sprintf("%q is not a duration from 0 to %v (e.g. 2ms)", s, MaxCommitDelay))}
	}
	if d == 0 {
		d = -1
	}
	return d, nil
}

// KeyOpenFiles is the map-store property that sets how many log files a
// map keeps open at once on HDFS, each taking the puts of its share of
// the partitions with a group commit and an hsync of its own: 1 to
// MaxOpenFiles; unset, the file store's default (one, whose group commit
// waits for company). More than one lets a DataNode whose fsyncs are
// slow sync several files at once.
const KeyOpenFiles = "stowage.hdfs.open-files"

// MaxOpenFiles is the most log files a map may keep open on HDFS (the
// file store's MaxOpenFiles).
const MaxOpenFiles = 8

// OpenFiles is properties.stowage.hdfs.open-files: 0 when unset (the file
// store's default), else 1 to MaxOpenFiles.
func (m MapStoreConfig) OpenFiles() (int, error) {
	s := m.Properties.Get(KeyOpenFiles, "")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxOpenFiles {
		return 0, &Error{Key: KeyOpenFiles, Err: kinded(ErrInvalid, fmt.Sprintf("%q is not a number of files from 1 to %d", s, MaxOpenFiles))}
	}
	return n, nil
}

// DefaultCheckpointNamespace is SeaTunnel's default checkpoint namespace.
const DefaultCheckpointNamespace = "/seatunnel/checkpoint/"

// Defaults of the values SeaTunnel and Hazelcast document.
const (
	DefaultClusterName = "seatunnel"
	DefaultPort        = 5801
	DefaultBackupCount = 1
	MaxBackupCount     = 6 // Hazelcast's limit on backup-count + async-backup-count
)

// Default returns a fresh configuration with SeaTunnel's defaults and no
// persisted maps: what an empty configuration directory means.
func Default() *Config {
	return &Config{
		Engine: Engine{
			BackupCount:                 DefaultBackupCount,
			QueueType:                   "blockingqueue",
			PrintExecutionInfoInterval:  60,
			PrintJobMetricsInfoInterval: 60,
			JobMetricsBackupInterval:    10,
			HistoryJobExpireMinutes:     1440,
			ClassloaderCacheMode:        false,
			SlotService:                 SlotService{DynamicSlot: true, SlotNum: 2},
			Checkpoint: Checkpoint{
				Interval: 300000 * time.Millisecond,
				Timeout:  30000 * time.Millisecond,
				Storage: CheckpointStorage{
					Type:         "hdfs",
					MaxRetained:  20,
					Namespace:    DefaultCheckpointNamespace,
					PluginConfig: fsbackend.Properties{},
				},
			},
			HTTP: defaultHTTP(),
		},
		Hazelcast: Hazelcast{
			ClusterName: DefaultClusterName,
			Network:     Network{Port: DefaultPort, PortCount: 100},
			Properties:  map[string]string{},
		},
	}
}

func newMapConfig(pattern string) MapConfig {
	return MapConfig{Pattern: pattern, BackupCount: DefaultBackupCount}
}

func newMapStore() *MapStoreConfig {
	return &MapStoreConfig{Enabled: true, InitialMode: "LAZY", WriteBatchSize: 1, WriteCoalescing: true, Properties: fsbackend.Properties{}}
}
