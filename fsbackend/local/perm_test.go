package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/local"
)

func modeOf(t *testing.T, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// TestFileModes: new files are 0600 and new directories 0700 by
// default; fs.permissions.umask-mode 022 gives 0644 and 0755.
func TestFileModes(t *testing.T) {
	old := syscall.Umask(0) // the process umask must not hide the FS's own modes
	defer syscall.Umask(old)
	ctx := context.Background()
	for _, tc := range []struct {
		umask         string
		file, dirMode os.FileMode
	}{
		{"", 0o600, 0o700},
		{"022", 0o644, 0o755},
		{"0027", 0o640, 0o750},
	} {
		root := t.TempDir()
		f, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "local", fsbackend.KeyUmask: tc.umask})
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(filepath.ToSlash(root), "/") + "/ns/a/b/f"
		if err := fsbackend.WriteFile(ctx, f, name, []byte("x")); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := modeOf(t, filepath.Join(root, "ns/a/b/f")); got != tc.file {
			t.Errorf("umask %q: file mode %v, want %v", tc.umask, got, tc.file)
		}
		for _, d := range []string{"ns", "ns/a", "ns/a/b"} {
			if got := modeOf(t, filepath.Join(root, d)); got != tc.dirMode {
				t.Errorf("umask %q: directory %s mode %v, want %v", tc.umask, d, got, tc.dirMode)
			}
		}
	}
	if _, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "local", fsbackend.KeyUmask: "0999"}); err == nil || !strings.Contains(err.Error(), fsbackend.KeyUmask) {
		t.Fatalf("a bad umask: err = %v, want one naming %s", err, fsbackend.KeyUmask)
	}
}

// TestSymlinkOutOfNamespace: a symbolic link below the namespace that
// leads out of it (a directory, a file, a dangling link) is refused for
// every operation; a link that stays inside is followed.
func TestSymlinkOutOfNamespace(t *testing.T) {
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	ns := filepath.Join(root, "ns")
	if err := os.MkdirAll(filepath.Join(ns, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ns, "inside", "f"), []byte("inside"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"dirlink":  outside,
		"filelink": filepath.Join(outside, "secret"),
		"dangling": filepath.Join(outside, "none"),
		"uplink":   "../..",
		"ok":       "inside",
	} {
		if err := os.Symlink(target, filepath.Join(ns, link)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := local.NewWith(root, local.Options{Confine: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, fsbackend.ErrOutsideNamespace) {
			t.Errorf("%s: err = %v, want ErrOutsideNamespace", what, err)
		} else if strings.Contains(err.Error(), root) {
			t.Errorf("%s: the error shows the absolute path: %v", what, err)
		}
	}
	_, err = f.Create(ctx, "ns/dirlink/new")
	refused("create through a directory link", err)
	_, err = f.Open(ctx, "ns/filelink")
	refused("open a file link", err)
	_, err = f.Stat(ctx, "ns/dirlink/secret")
	refused("stat through a directory link", err)
	refused("remove through a directory link", f.Remove(ctx, "ns/dirlink/secret"))
	refused("rename out through a link", f.Rename(ctx, "ns/inside/f", "ns/dirlink/moved"))
	_, err = f.Create(ctx, "ns/dangling")
	refused("create on a dangling link", err)
	_, err = f.Open(ctx, "ns/uplink/ns/inside/f")
	refused("open through a link to an ancestor", err)
	if _, err := os.Stat(filepath.Join(outside, "secret")); err != nil {
		t.Fatalf("the file outside was touched: %v", err)
	}
	if b, err := fsbackend.ReadFile(ctx, f, "ns/ok/f"); err != nil || string(b) != "inside" {
		t.Fatalf("a link inside the namespace: %q, %v", b, err)
	}
	if err := fsbackend.WriteFile(ctx, f, "ns/ok/g", []byte("v")); err != nil {
		t.Fatalf("create through a link inside the namespace: %v", err)
	}
}
