package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/stowage/stowage/checkpoint"
)

// checkpoints inspects checkpoint storage: list [JOB], show JOB PIPELINE
// [CHECKPOINT], verify. Storage and namespace come from seatunnel.yaml's
// checkpoint block (--config-dir), or from --fs and --namespace.
func (in *inspector) checkpoints(ctx context.Context, args []string, ns string) error {
	props := in.props
	if in.cfg != nil {
		cs := in.cfg.Engine.Checkpoint.Storage
		props, ns = cs.PluginConfig, cs.Namespace
	}
	if props == nil || ns == "" {
		return errors.New("checkpoints: give --config-dir, or --fs with --namespace (the checkpoint namespace, ending in /)")
	}
	if strings.Trim(ns, "/") == "" {
		return fmt.Errorf("checkpoints: namespace %q is the storage root; give the checkpoint namespace, e.g. /seatunnel/checkpoint/", ns)
	}
	if !strings.HasSuffix(ns, "/") {
		ns += "/"
	}
	st, done, err := in.openStorage(ctx, props, false)
	if err != nil {
		return err
	}
	defer done()
	f := st.fs
	switch {
	case len(args) >= 1 && args[0] == "list" && len(args) <= 2:
		if len(args) == 2 {
			infos, err := checkpoint.List(ctx, f, ns, args[1])
			if err != nil {
				return err
			}
			in.print(infos, func(w io.Writer) {
				for _, c := range infos {
					fmt.Fprintf(w, "%s\tpipeline %d\tcheckpoint %d\t%d bytes\t%s\n", c.Job, c.Pipeline, c.CheckpointID, c.Size, c.File)
				}
			})
			return nil
		}
		jobs, err := checkpoint.Inspect(ctx, f, ns)
		if err != nil {
			return err
		}
		in.print(jobs, func(w io.Writer) {
			for _, j := range jobs {
				deleting := ""
				if j.Deleting {
					deleting = "\tbeing deleted"
				}
				fmt.Fprintf(w, "%s\t%d files\t%d bytes%s\n", j.Job, j.Files, j.Bytes, deleting)
				for _, p := range j.Pipelines {
					fmt.Fprintf(w, "  pipeline %d: %d checkpoints, ids %d..%d\n", p.Pipeline, p.Checkpoints, p.Oldest, p.Latest)
				}
			}
		})
		return nil
	case len(args) >= 3 && args[0] == "show" && len(args) <= 4:
		pl, err := strconv.Atoi(args[2])
		if err != nil {
			return fmt.Errorf("checkpoints show: pipeline %q is not a number", args[2])
		}
		id := checkpoint.Latest
		if len(args) == 4 {
			if id, err = strconv.ParseInt(args[3], 10, 64); err != nil {
				return fmt.Errorf("checkpoints show: checkpoint %q is not a number", args[3])
			}
		}
		info, _, err := checkpoint.Show(ctx, f, ns, args[1], pl, id)
		if err != nil {
			return err
		}
		in.print(info, func(w io.Writer) {
			fmt.Fprintf(w, "job:          %s\npipeline:     %d\ncheckpoint:   %d\nfile:         %s\nsize:         %d\nstate length: %d\ncrc:          %s\n",
				info.Job, info.Pipeline, info.CheckpointID, info.File, info.Size, info.StateLength, info.CRC)
			if info.Damage != nil {
				fmt.Fprintf(w, "damage:       %+v\n", *info.Damage)
			}
			if len(info.Skipped) > 0 {
				fmt.Fprintf(w, "note:         the latest checkpoint is damaged; this is the newest that reads clean\n")
			}
			for _, d := range info.Skipped {
				fmt.Fprintf(w, "skipped:      damaged checkpoint %d (%s) at offset %d: %s\n", d.CheckpointID, d.File, d.Offset, d.Reason)
			}
		})
		return nil
	case len(args) == 1 && args[0] == "verify":
		rep, err := checkpoint.Verify(ctx, f, ns, checkpoint.VerifyOptions{Progress: in.bar("verify checkpoints")})
		if err != nil {
			return err
		}
		in.print(rep, func(w io.Writer) {
			for _, d := range rep.Damaged {
				fmt.Fprintf(w, "damaged: %+v\n", d)
			}
			for _, j := range rep.Deleting {
				fmt.Fprintf(w, "being deleted: job %s (the next delete or store of it finishes)\n", j)
			}
			fmt.Fprintf(w, "%d jobs, %d checkpoints, %d good, %d damaged\n", rep.Jobs, rep.Checkpoints, rep.Good, len(rep.Damaged))
		})
		if !rep.OK() {
			return exitError(1)
		}
		return nil
	}
	return errUsage
}
