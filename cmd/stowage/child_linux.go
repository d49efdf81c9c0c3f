package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes a member process started by demo, bench or a test
// die when the process that started it dies, even by SIGKILL.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
