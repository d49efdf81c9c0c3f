package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/stowage/stowage/fsbackend"
)

// Config is a whole engine configuration. Default returns a fresh one; it
// must not be modified once handed to a node.
type Config struct {
	Engine    Engine
	Hazelcast Hazelcast
}

// Engine is seatunnel.engine.
type Engine struct {
	BackupCount                 int    // backup-count, default 1
	QueueType                   string // queue-type, default blockingqueue
	PrintExecutionInfoInterval  int    // print-execution-info-interval (seconds), default 60
	PrintJobMetricsInfoInterval int    // print-job-metrics-info-interval (seconds), default 60
	JobMetricsBackupInterval    int    // job-metrics-backup-interval (seconds), default 3
	HistoryJobExpireMinutes     int    // history-job-expire-minutes, default 1440
	ClassloaderCacheMode        bool   // classloader-cache-mode, default true
	SlotService                 SlotService
	Checkpoint                  Checkpoint
}

// SlotService is seatunnel.engine.slot-service.
type SlotService struct {
	DynamicSlot bool // dynamic-slot, default true
	SlotNum     int  // slot-num, default 2 (used when dynamic-slot is false)
}

// Checkpoint is seatunnel.engine.checkpoint.
type Checkpoint struct {
	Interval time.Duration // interval, in milliseconds in YAML; default 300000
	Timeout  time.Duration // timeout, in milliseconds in YAML; default 10000
	Storage  CheckpointStorage
}

// CheckpointStorage is seatunnel.engine.checkpoint.storage.
type CheckpointStorage struct {
	// Type is the storage plugin: "hdfs" (default; serves every
	// storage.type) or "localfile" (deprecated alias).
	Type string
	// MaxRetained is how many completed checkpoints are kept per
	// pipeline (max-retained, default 1).
	MaxRetained int
	// Namespace is plugin-config.namespace, always ending in "/"
	// (default /seatunnel/checkpoint/).
	Namespace string
	// PluginConfig is the whole plugin-config block as strings.
	PluginConfig fsbackend.Properties
}

// Hazelcast is hazelcast.yaml's hazelcast block.
type Hazelcast struct {
	ClusterName string            // cluster-name, default "seatunnel"
	Network     Network           // network
	Properties  map[string]string // properties (hazelcast.* settings)
	Maps        []MapConfig       // map.<name or pattern>, in file order
}

// Network is hazelcast.network.
type Network struct {
	Port              int      // port.port (or port: N), default 5801
	PortAutoIncrement bool     // port.auto-increment, default false as SeaTunnel ships it
	PortCount         int      // port.port-count, default 100
	TCPIPEnabled      bool     // join.tcp-ip.enabled
	MemberList        []string // join.tcp-ip.member-list
}

// MapConfig is one hazelcast.map entry.
type MapConfig struct {
	Pattern          string // the entry's name: a map name, or a pattern with one '*'
	BackupCount      int    // backup-count, default 1
	AsyncBackupCount int    // async-backup-count, default 0
	MapStore         *MapStoreConfig
}

// MapStoreConfig is a map's map-store block.
type MapStoreConfig struct {
	Enabled           bool   // enabled, default true when the block is present
	InitialMode       string // initial-mode: EAGER or LAZY (default LAZY, as Hazelcast)
	FactoryClassName  string // factory-class-name (informational)
	ClassName         string // class-name (informational)
	WriteDelaySeconds int    // write-delay-seconds; only 0 (write-through) is supported
	WriteBatchSize    int    // write-batch-size, default 1
	WriteCoalescing   bool   // write-coalescing, default true
	// Properties: type (hdfs | bbolt), namespace, clusterName, storage.type,
	// fs.defaultFS, block.size, bucket and credential keys, path (bbolt).
	Properties fsbackend.Properties
}

// StoreType is properties.type, lower-cased; "hdfs" when unset.
func (m *MapStoreConfig) StoreType() string {
	return lower(m.Properties.Get("type", "hdfs"))
}

// Default returns a fresh configuration with SeaTunnel's defaults and no
// persisted maps.
func Default() *Config {
	return &Config{
		Engine: Engine{
			BackupCount: 1, QueueType: "blockingqueue", PrintExecutionInfoInterval: 60,
			PrintJobMetricsInfoInterval: 60, JobMetricsBackupInterval: 3, HistoryJobExpireMinutes: 1440,
			ClassloaderCacheMode: true,
			SlotService:          SlotService{DynamicSlot: true, SlotNum: 2},
			Checkpoint: Checkpoint{
				Interval: 300000 * time.Millisecond, Timeout: 10000 * time.Millisecond,
				Storage: CheckpointStorage{Type: "hdfs", MaxRetained: 1, Namespace: DefaultCheckpointNamespace,
					PluginConfig: fsbackend.Properties{}},
			},
		},
		Hazelcast: Hazelcast{
			ClusterName: "seatunnel",
			Network:     Network{Port: 5801, PortCount: 100},
			Properties:  map[string]string{},
		},
	}
}

// DefaultCheckpointNamespace is SeaTunnel's default checkpoint namespace.
const DefaultCheckpointNamespace = "/seatunnel/checkpoint/"

// Load reads DIR/seatunnel.yaml and DIR/hazelcast.yaml (a missing file
// means defaults) and validates the result.
func Load(dir string) (*Config, error) {
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	st, err := read("seatunnel.yaml")
	if err != nil {
		return nil, fmt.Errorf("stowage/config: %w", err)
	}
	hz, err := read("hazelcast.yaml")
	if err != nil {
		return nil, fmt.Errorf("stowage/config: %w", err)
	}
	c, err := parse(st, hz, filepath.Join(dir, "seatunnel.yaml"), filepath.Join(dir, "hazelcast.yaml"))
	if err != nil {
		return nil, err
	}
	return c, c.Validate()
}

// Parse reads the two files' contents (either may be nil) and validates
// the result.
func Parse(seatunnelYAML, hazelcastYAML []byte) (*Config, error) {
	c, err := parse(seatunnelYAML, hazelcastYAML, "seatunnel.yaml", "hazelcast.yaml")
	if err != nil {
		return nil, err
	}
	return c, c.Validate()
}
