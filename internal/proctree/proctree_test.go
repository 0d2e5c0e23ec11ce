package proctree

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestReadSeesAGrandchildAndItsGroup: a shell this test starts in a group
// of its own, and the sleep that shell starts, are both descendants of the
// test; the sleep is in the shell's group; the test is no descendant of
// either.
func TestReadSeesAGrandchildAndItsGroup(t *testing.T) {
	cmd := exec.Command("/bin/sh", "-c", "sleep 30 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() }()
	var sleep int
	buf := make([]byte, 32)
	n, _ := out.Read(buf)
	for _, c := range buf[:n] {
		if c >= '0' && c <= '9' {
			sleep = sleep*10 + int(c-'0')
		}
	}
	tab := Read()
	self, sh := os.Getpid(), cmd.Process.Pid
	switch {
	case !tab.Descends(sh, self) || !tab.Descends(sleep, self):
		t.Errorf("shell %d and sleep %d should descend from the test %d: %+v %+v", sh, sleep, self, tab[sh], tab[sleep])
	case !tab.Descends(sleep, sh):
		t.Errorf("sleep %d should descend from shell %d", sleep, sh)
	case tab.Descends(self, sh) || tab.Descends(sh, sleep):
		t.Error("an ancestor counted as a descendant")
	case tab[sleep].PGRP != sh || tab[sh].PGRP != sh:
		t.Errorf("groups: shell %d, sleep %d; want both %d", tab[sh].PGRP, tab[sleep].PGRP, sh)
	}
}
