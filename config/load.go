package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File names in a configuration directory, as SeaTunnel names them.
const (
	SeatunnelFile = "seatunnel.yaml"
	HazelcastFile = "hazelcast.yaml"
	// MasterFile and WorkerFile are the member files of SeaTunnel's
	// separated cluster mode (seatunnel-cluster.sh -r master, -r worker).
	MasterFile = "hazelcast-master.yaml"
	WorkerFile = "hazelcast-worker.yaml"
)

// Member roles, as seatunnel-cluster.sh -r names them. They choose the
// member file LoadRole reads.
const (
	RoleHybrid = ""       // hazelcast.yaml: master and worker in one process
	RoleMaster = "master" // hazelcast-master.yaml
	RoleWorker = "worker" // hazelcast-worker.yaml
)

// Load reads dir/seatunnel.yaml and dir/hazelcast.yaml and validates the
// result. A missing file means its defaults; a file that is present but
// does not parse is an error naming the file and line. Errors are *Error.
func Load(dir string) (*Config, error) { return LoadRole(dir, RoleHybrid) }

// LoadRole is Load with the member file of a role: hazelcast.yaml for
// RoleHybrid, hazelcast-master.yaml for RoleMaster, hazelcast-worker.yaml
// for RoleWorker. The file of a master or worker must exist: without it a
// member would silently run alone.
func LoadRole(dir, role string) (*Config, error) {
	hzName := HazelcastFile
	switch role {
	case RoleHybrid:
	case RoleMaster:
		hzName = MasterFile
	case RoleWorker:
		hzName = WorkerFile
	default:
		return nil, &Error{Err: kinded(ErrInvalid, fmt.Sprintf("unknown role %q (known: master, worker, or none for hazelcast.yaml)", role))}
	}
	st, err := readOptional(filepath.Join(dir, SeatunnelFile))
	if err != nil {
		return nil, err
	}
	hzPath := filepath.Join(dir, hzName)
	hz, err := readOptional(hzPath)
	if err != nil {
		return nil, err
	}
	if hz == nil && role != RoleHybrid {
		if _, err := os.Stat(hzPath); errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: hzPath, Err: kinded(ErrInvalid, "missing: role "+role+" reads its member configuration from it")}
		}
	}
	return parse(st, hz, filepath.Join(dir, SeatunnelFile), hzPath)
}

func readOptional(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("stowage/config: %w", err)
	}
	return b, nil
}

// Parse reads the contents of seatunnel.yaml and hazelcast.yaml (either
// may be nil or empty: defaults) and validates the result, as Load does.
// Decoding errors wrap ErrSyntax, ErrUnknownKey or ErrType and stop at the
// first; Validate's errors wrap ErrInvalid and are all reported.
func Parse(seatunnelYAML, hazelcastYAML []byte) (*Config, error) {
	return parse(seatunnelYAML, hazelcastYAML, SeatunnelFile, HazelcastFile)
}

func parse(st, hz []byte, stFile, hzFile string) (*Config, error) {
	c := Default()
	c.origin = &origin{seatunnelFile: stFile, hazelcastFile: hzFile, lines: map[string]int{}}
	for _, f := range []struct {
		data []byte
		file string
		read func(*Config, node) error
	}{
		{st, stFile, parseSeatunnel},
		{hz, hzFile, parseHazelcast},
	} {
		root, err := parseRoot(f.data, f.file)
		if err != nil {
			return nil, err
		}
		if err := f.read(c, root); err != nil {
			return nil, err
		}
		for k, v := range root.src.lines {
			c.origin.lines[k] = v
		}
		c.ignored = append(c.ignored, root.src.noEffect...)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}
