// Command hostile is the attacker the sandbox tests run inside hunk exec: it
// tries one escape or leak per line and prints "ESCAPED: what" for each that
// worked and "blocked: what (why)" for each that did not. It always exits 0;
// the test reads the lines.
//
//	hostile [-key DESC] [-victim PID] ATTACK...
//
// Attacks: ptrace, signal, getfd, environ, vmread (at the parent — hunk
// under the landlock and none drivers — and at -victim, a process outside
// the sandbox), mknod, tiocsti, host, prlimit (at -victim), keyring (the key
// -key in the user keyring), fds (descriptors above 2), caps, unix (connect
// to -sock, a unix socket of the host), cmdline (the command line of
// -victim, and whether any process outside the sandbox is listed), metadata (chmod, chown, utimes and
// xattrs on -file, a file of the host outside the workspace, by name, by
// descriptor and through a symlink in the workspace; the same on a file of
// the workspace must work, or it prints "BROKEN: what"), setuid (a
// set-user-ID or set-group-ID file in the workspace, every way a file gets
// a mode), git (a hook and core.fsmonitor in the workspace's .git, and
// .git moved away and replaced).
//
//	hostile swap A B
//
// is not an attack of its own but the other side of one: it exchanges the
// names A and B (renameat2 RENAME_EXCHANGE, two symbolic links made to lead
// to an allowed and a denied place) as fast as it can, until a file named
// stop appears, for hunk's own reads and writes to race against; it prints
// how many times it swapped.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

var inherited []int // descriptors above 2 open at start

func init() {
	for fd := 3; fd < 256; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		// The Go runtime's own: it keeps the cgroup CPU limit files open.
		if l, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)); strings.HasPrefix(l, "/sys/fs/cgroup/") {
			continue
		}
		inherited = append(inherited, fd)
	}
}

func main() {
	victim := flag.Int("victim", 0, "pid of a process outside the sandbox")
	key := flag.String("key", "", "description of a key in the user keyring")
	sock := flag.String("sock", "", "a unix socket of the host, outside the workspace")
	file := flag.String("file", "", "a file of the host outside the workspace, the command's user's own")
	flag.Parse()
	if flag.NArg() == 3 && flag.Arg(0) == "swap" {
		swap(flag.Arg(1), flag.Arg(2))
		return
	}
	targets := map[string]int{}
	if ppid := os.Getppid(); ppid > 1 { // not the sandbox's own init
		targets["parent"] = ppid
	}
	if *victim > 0 {
		targets["victim"] = *victim
	}
	for _, a := range flag.Args() {
		switch a {
		case "ptrace":
			forTasks(targets, "ptrace", func(pid, tid int) error {
				if err := unix.PtraceSeize(tid); err != nil {
					return err
				}
				_ = unix.PtraceDetach(tid)
				return nil
			})
		case "signal":
			forTasks(targets, "signal", func(pid, tid int) error {
				if err := unix.Kill(tid, 0); err == nil {
					return nil
				}
				if err := unix.Tgkill(pid, tid, 0); err == nil {
					return nil
				}
				fd, err := unix.PidfdOpen(pid, 0)
				if err != nil {
					return err
				}
				defer unix.Close(fd)
				return unix.PidfdSendSignal(fd, 0, nil, 0)
			})
			report("kill(-1, 0)", unix.Kill(-1, 0))
		case "getfd":
			for name, pid := range targets {
				fd, err := unix.PidfdOpen(pid, 0)
				if err != nil {
					report("pidfd_getfd on "+name+": pidfd_open", err)
					continue
				}
				var last error
				got := -1
				for n := 0; n < 32 && got < 0; n++ {
					if g, err := unix.PidfdGetfd(fd, n, 0); err == nil {
						got = g
					} else {
						last = err
					}
				}
				unix.Close(fd)
				if got >= 0 {
					last = nil
				}
				report("pidfd_getfd on "+name, last)
			}
		case "cmdline":
			if pid, ok := targets["victim"]; ok {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				if err == nil && len(b) == 0 {
					err = fmt.Errorf("empty")
				}
				report("read the victim's command line", err)
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", os.Getppid())); os.Getppid() > 1 && err == nil {
				fmt.Println("ESCAPED: hunk's process is listed in /proc")
			} else {
				fmt.Println("blocked: hunk's process is not listed in /proc")
			}
		case "environ":
			forTasks(targets, "read environ", func(pid, tid int) error {
				b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/environ", pid, tid))
				if err != nil {
					return err
				}
				if len(b) == 0 {
					return fmt.Errorf("empty")
				}
				return nil
			})
		case "vmread":
			for name, pid := range targets {
				var buf [8]byte
				local := []unix.Iovec{{Base: &buf[0], Len: 8}}
				remote := []unix.RemoteIovec{{Base: 0x400000, Len: 8}}
				_, err := unix.ProcessVMReadv(pid, local, remote, 0)
				if err == unix.EFAULT {
					err = nil // the permission was granted; only the address was wrong
				}
				report("process_vm_readv on "+name, err)
			}
		case "mknod":
			p := filepath.Join(".", "hostile-blockdev")
			err := unix.Mknod(p, unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0)))
			report("mknod of a block device", err)
			os.Remove(p)
		case "tiocsti":
			for fd := 0; fd < 3; fd++ {
				report("TIOCSTI on fd "+strconv.Itoa(fd), tiocsti(fd))
			}
			if fd, err := unix.Open("/dev/tty", unix.O_RDWR, 0); err != nil {
				report("open /dev/tty", err)
			} else {
				report("TIOCSTI on /dev/tty", tiocsti(fd))
			}
		case "host":
			name, _ := os.Hostname()
			report("sethostname", unix.Sethostname([]byte(name)))
			var ts unix.Timespec
			_ = unix.ClockGettime(unix.CLOCK_REALTIME, &ts)
			report("clock_settime", unix.ClockSettime(unix.CLOCK_REALTIME, &ts))
		case "prlimit":
			pid, ok := targets["victim"]
			if !ok {
				continue
			}
			var lim unix.Rlimit
			err := unix.Prlimit(pid, unix.RLIMIT_CORE, nil, &lim)
			if err == nil {
				err = unix.Prlimit(pid, unix.RLIMIT_CORE, &lim, nil)
			}
			report("prlimit on victim", err)
			prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
			if err == nil {
				err = unix.Setpriority(unix.PRIO_PROCESS, pid, 20-prio)
			}
			report("setpriority on victim", err)
		case "keyring":
			id, err := unix.KeyctlSearch(unix.KEY_SPEC_USER_KEYRING, "user", *key, 0)
			if err == nil {
				_, err = unix.KeyctlBuffer(unix.KEYCTL_READ, id, make([]byte, 64), 0)
			}
			report("reading a key of the user keyring", err)
		case "fds":
			if len(inherited) > 0 {
				var s []string
				for _, fd := range inherited {
					l, _ := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
					s = append(s, fmt.Sprintf("%d->%s", fd, l))
				}
				fmt.Printf("ESCAPED: inherited descriptors %s\n", strings.Join(s, " "))
			} else {
				fmt.Println("blocked: inherited descriptors (none above 2)")
			}
		case "caps":
			b, _ := os.ReadFile("/proc/self/status")
			for _, l := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(l, "CapEff:") {
					v, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(l, "CapEff:")), 16, 64)
					const dangerous = 1<<unix.CAP_SYS_ADMIN | 1<<unix.CAP_MKNOD | 1<<unix.CAP_SYS_PTRACE | 1<<unix.CAP_SYS_TIME | 1<<unix.CAP_SYS_MODULE | 1<<unix.CAP_DAC_READ_SEARCH | 1<<unix.CAP_SYS_RAWIO
					if v&dangerous != 0 {
						fmt.Printf("ESCAPED: effective capabilities %x include %x\n", v, v&dangerous)
					} else {
						fmt.Printf("blocked: dangerous capabilities (effective %x)\n", v)
					}
				}
			}
		case "addkey": // not an attack: the test's set-up, outside the sandbox
			if _, err := unix.AddKey("user", *key, []byte("hunk-key-secret"), unix.KEY_SPEC_USER_KEYRING); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		case "unix":
			if *sock == "" {
				continue
			}
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err == nil {
				err = unix.Connect(fd, &unix.SockaddrUnix{Name: *sock})
				unix.Close(fd)
			}
			report("connect to the host's unix socket "+*sock, err)
		case "metadata":
			if *file == "" {
				continue
			}
			metadata(*file)
		case "setuid":
			setuid()
		case "git":
			report("planting a hook in .git/hooks", os.WriteFile(".git/hooks/pre-commit", []byte("#!/bin/sh\nevil\n"), 0o755))
			f, err := os.OpenFile(".git/config", os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString("[core]\n\tfsmonitor = evil\n")
				f.Close()
			}
			report("setting core.fsmonitor in .git/config", err)
			err = os.Rename(".git", ".git-old")
			if err == nil {
				err = os.MkdirAll(".git/hooks", 0o755)
			}
			report("replacing .git", err)
		case "sleep":
			time.Sleep(time.Hour)
		default:
			fmt.Printf("unknown attack %q\n", a)
			os.Exit(2)
		}
	}
}

// swap exchanges a and b until a file named stop appears (or ten minutes
// pass), and prints how many exchanges it made.
func swap(a, b string) {
	deadline := time.Now().Add(10 * time.Minute)
	n := 0
	for ; time.Now().Before(deadline); n++ {
		if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
			fmt.Printf("swap: %v\n", err)
			os.Exit(1)
		}
		if n%256 == 0 {
			if _, err := os.Lstat("stop"); err == nil {
				break
			}
		}
	}
	fmt.Printf("swapped %d times\n", n)
}

func tiocsti(fd int) error {
	c := byte('#')
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	if e != 0 {
		return e
	}
	return nil
}

// forTasks tries f on every thread of every target: the attack worked if it
// worked on one of them.
func forTasks(targets map[string]int, what string, f func(pid, tid int) error) {
	for name, pid := range targets {
		tids := []int{pid}
		if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
			tids = tids[:0]
			for _, e := range ents {
				if n, err := strconv.Atoi(e.Name()); err == nil {
					tids = append(tids, n)
				}
			}
		}
		var last error
		worked := ""
		for _, tid := range tids {
			if err := f(pid, tid); err == nil {
				worked = strconv.Itoa(tid)
				break
			} else {
				last = err
			}
		}
		if worked != "" {
			fmt.Printf("ESCAPED: %s %s (pid %d, thread %s)\n", what, name, pid, worked)
		} else {
			fmt.Printf("blocked: %s %s (%v)\n", what, name, last)
		}
	}
}

// metadata changes the mode, owner, times and extended attributes of the
// host's file every way it can, then checks that the workspace's own files
// can still be changed.
func metadata(file string) {
	uid, gid := os.Getuid(), os.Getgid()
	past := []unix.Timespec{{Sec: 978307200}, {Sec: 978307200}}
	report("chmod of a host file", unix.Chmod(file, 0o4777))
	report("fchmodat of a host file", unix.Fchmodat(unix.AT_FDCWD, file, 0o4777, 0))
	report("chown of a host file", unix.Chown(file, uid, gid))
	report("utimensat of a host file", unix.UtimesNanoAt(unix.AT_FDCWD, file, past, 0))
	report("setxattr on a host file", unix.Setxattr(file, "user.hunk", []byte("x"), 0))
	if fd, err := unix.Open(file, unix.O_RDONLY, 0); err == nil {
		report("fchmod of a host file opened for reading", unix.Fchmod(fd, 0o4777))
		report("fchown of a host file opened for reading", unix.Fchown(fd, uid, gid))
		report("futimens of a host file opened for reading", unix.UtimesNanoAt(fd, "", past, unix.AT_EMPTY_PATH))
		unix.Close(fd)
	} else {
		fmt.Printf("blocked: opening the host file (%v)\n", err)
	}
	if fd, err := unix.Open(file, unix.O_RDONLY, 0); err == nil {
		flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
		if err == nil {
			err = unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|0x80)) // FS_NOATIME_FL
		}
		report("chattr +A of a host file opened for reading", err)
		_, err = unix.FcntlInt(uintptr(fd), unix.F_SETLEASE, unix.F_RDLCK)
		report("a lease on a host file opened for reading", err)
		unix.Close(fd)
	}
	_ = os.Remove("meta-link")
	if err := os.Symlink(file, "meta-link"); err == nil {
		report("chmod of a host file through a symlink in the workspace", unix.Chmod("meta-link", 0o4777))
		report("chown of a host file through a symlink in the workspace", unix.Fchownat(unix.AT_FDCWD, "meta-link", uid, gid, 0))
	}
	// What a build does to its own files must still work.
	must := func(what string, err error) {
		if err != nil {
			fmt.Printf("BROKEN: %s (%v)\n", what, err)
		}
	}
	must("writing a file of the workspace", os.WriteFile("meta-own", []byte("x"), 0o644))
	must("chmod of a file of the workspace", unix.Chmod("meta-own", 0o755))
	must("chown of a file of the workspace", unix.Chown("meta-own", uid, gid))
	must("utimensat of a file of the workspace", unix.UtimesNanoAt(unix.AT_FDCWD, "meta-own", past, 0))
	must("lchown of a symlink in the workspace", unix.Lchown("meta-link", uid, gid))
	var st unix.Stat_t
	if unix.Stat("meta-own", &st) == nil && st.Mode&0o777 != 0o755 {
		fmt.Printf("BROKEN: the workspace file's mode is %o after chmod 755\n", st.Mode&0o777)
	}
}

// setuid tries to leave a set-user-ID or set-group-ID file behind.
func setuid() {
	_ = os.WriteFile("suid", []byte("#!/bin/sh\n"), 0o755)
	report("chmod 4755 of a file of the workspace", unix.Chmod("suid", 0o4755))
	report("fchmodat 2755 of a file of the workspace", unix.Fchmodat(unix.AT_FDCWD, "suid", 0o2755, 0))
	if fd, err := unix.Open("suid", unix.O_RDONLY, 0); err == nil {
		report("fchmod 4755 of a file of the workspace", unix.Fchmod(fd, 0o4755))
		unix.Close(fd)
	}
	fd, err := unix.Open("suid-new", unix.O_CREAT|unix.O_WRONLY|unix.O_EXCL, 0o4755)
	if err == nil {
		unix.Close(fd)
	}
	report("open(O_CREAT) with mode 4755", err)
	report("mknod of a regular file with mode 4755", unix.Mknod("suid-node", unix.S_IFREG|0o4755, 0))
	var st unix.Stat_t
	for _, n := range []string{"suid", "suid-new", "suid-node"} {
		if unix.Stat(n, &st) == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
			fmt.Printf("ESCAPED: %s has mode %o\n", n, st.Mode&0o7777)
		}
	}
}

func report(what string, err error) {
	if err == nil {
		fmt.Printf("ESCAPED: %s\n", what)
	} else {
		fmt.Printf("blocked: %s (%v)\n", what, err)
	}
}
