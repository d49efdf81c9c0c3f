package fsbackend

import (
	"context"
	"strings"
)

// Sub returns an FS whose names are all below dir of f, so that one map or
// one checkpoint namespace can never touch files outside its directory.
// Close on the returned FS does not close f.
func Sub(f FS, dir string) (FS, error) {
	if err := ValidDir(dir); err != nil {
		return nil, err
	}
	if dir == "" {
		return f, nil
	}
	return &subFS{fs: f, dir: dir}, nil
}

type subFS struct {
	fs  FS
	dir string
}

func (s *subFS) full(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	return s.dir + "/" + name, nil
}

func (s *subFS) Create(ctx context.Context, name string) (Writer, error) {
	n, err := s.full(name)
	if err != nil {
		return nil, err
	}
	return s.fs.Create(ctx, n)
}

func (s *subFS) Open(ctx context.Context, name string) (Reader, error) {
	n, err := s.full(name)
	if err != nil {
		return nil, err
	}
	return s.fs.Open(ctx, n)
}

func (s *subFS) Stat(ctx context.Context, name string) (FileInfo, error) {
	n, err := s.full(name)
	if err != nil {
		return FileInfo{}, err
	}
	fi, err := s.fs.Stat(ctx, n)
	fi.Name = name
	return fi, err
}

func (s *subFS) List(ctx context.Context, dir string) ([]FileInfo, error) {
	if err := ValidDir(dir); err != nil {
		return nil, err
	}
	list, err := s.fs.List(ctx, Join(s.dir, dir))
	if err != nil {
		return nil, err
	}
	out := list[:0]
	for _, fi := range list {
		if rest, ok := strings.CutPrefix(fi.Name, s.dir+"/"); ok {
			fi.Name = rest
			out = append(out, fi)
		}
	}
	return out, nil
}

func (s *subFS) Remove(ctx context.Context, name string) error {
	n, err := s.full(name)
	if err != nil {
		return err
	}
	return s.fs.Remove(ctx, n)
}

func (s *subFS) Rename(ctx context.Context, oldName, newName string) error {
	o, err := s.full(oldName)
	if err != nil {
		return err
	}
	n, err := s.full(newName)
	if err != nil {
		return err
	}
	return s.fs.Rename(ctx, o, n)
}

func (s *subFS) Capabilities() Capabilities { return s.fs.Capabilities() }

func (s *subFS) Close() error { return nil }

// RemoveAll implements DirRemover through f's, or one Remove a file.
func (s *subFS) RemoveAll(ctx context.Context, dir string) error {
	n, err := s.full(dir)
	if err != nil {
		return err
	}
	return RemoveAll(ctx, s.fs, n)
}

// RenameDir implements DirRenamer through f's, or fails with
// ErrUnsupported.
func (s *subFS) RenameDir(ctx context.Context, dir, newDir string) error {
	r, ok := s.fs.(DirRenamer)
	if !ok {
		return ErrUnsupported
	}
	o, err := s.full(dir)
	if err != nil {
		return err
	}
	n, err := s.full(newDir)
	if err != nil {
		return err
	}
	return r.RenameDir(ctx, o, n)
}

// Recycle implements Recycler through f's, or fails with ErrUnsupported.
func (s *subFS) Recycle(ctx context.Context, oldName, newName string) (Writer, error) {
	r, ok := s.fs.(Recycler)
	if !ok {
		return nil, ErrUnsupported
	}
	o, err := s.full(oldName)
	if err != nil {
		return nil, err
	}
	n, err := s.full(newName)
	if err != nil {
		return nil, err
	}
	return r.Recycle(ctx, o, n)
}

// Recover implements Recoverer through f's, or does nothing.
func (s *subFS) Recover(ctx context.Context, name string) error {
	n, err := s.full(name)
	if err != nil {
		return err
	}
	return Recover(ctx, s.fs, n)
}
