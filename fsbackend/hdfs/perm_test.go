package hdfs_test

import (
	"context"
	"os"
	"testing"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

// TestFileModes: on the real HDFS of testdata/hdfs, files the back end
// creates are 0600 and its directories 0700 by default, and 0644 / 0755
// with fs.permissions.umask-mode 022.
func TestFileModes(t *testing.T) {
	need(t, envHDFS)
	ctx := context.Background()
	for _, tc := range []struct {
		umask     string
		file, dir os.FileMode
	}{
		{"", 0o600, 0o700},
		{"022", 0o644, 0o755},
	} {
		p := clusterProps(fsbackend.KeyUmask, tc.umask)
		f := openRaw(t, p)
		dir := uniqueDir(t)
		if err := fsbackend.WriteFile(ctx, f, dir+"/sub/f", []byte("x")); err != nil {
			t.Fatal(err)
		}
		cfg, err := hdfs.ParseProperties(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := gohdfs.NewClient(cfg.ClientOptions())
		if err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]os.FileMode{"/" + dir + "/sub/f": tc.file, "/" + dir + "/sub": tc.dir} {
			st, err := c.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if got := st.Mode().Perm(); got != want {
				t.Errorf("umask %q: %s has mode %v, want %v", tc.umask, name, got, want)
			}
		}
		c.Close()
	}
}
