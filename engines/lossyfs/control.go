package lossyfs

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Controller is what the control socket drives; *FS is one.
type Controller interface {
	Cut()
	Recover()
	Sync() error
	FailWrites(on bool)
	FailIO(point IOPoint)
	Status() Status
}

// ControlPath is the default control socket of the mount at mountpoint: a name in the temporary
// directory derived from the mount point's absolute path, so `qbench lossyfs cut MOUNTPOINT` finds
// it without being told. (Not inside the mount: the server under test would see it.)
func ControlPath(mountpoint string) (string, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(os.TempDir(), "qbench-lossyfs-"+hex.EncodeToString(sum[:8])+".sock"), nil
}

// The control protocol: one command per line, one reply line each: "ok" plus detail, or "error: ...".
const (
	CmdCut     = "cut"
	CmdRecover = "recover"
	CmdSync    = "sync"
	CmdFailOn  = "fail-writes on"
	CmdFailOff = "fail-writes off"
	CmdStatus  = "status"
	// CmdFailIO is followed by a point: "fail-io write", "fail-io fsync", "fail-io off".
	CmdFailIO    = "fail-io"
	replyOK      = "ok"
	replyErrPref = "error: "
)

// ServeControl answers control commands on l until l is closed.
func ServeControl(l net.Listener, c Controller) error {
	for {
		conn, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go serveConn(conn, c)
	}
}

func serveConn(conn net.Conn, c Controller) {
	defer conn.Close()
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		reply := replyOK
		if detail, err := execute(c, strings.TrimSpace(sc.Text())); err != nil {
			reply = replyErrPref + err.Error()
		} else if detail != "" {
			reply += " " + detail
		}
		if _, err := fmt.Fprintln(conn, reply); err != nil {
			return
		}
	}
}

func execute(c Controller, cmd string) (string, error) {
	switch cmd {
	case CmdCut:
		c.Cut()
	case CmdRecover:
		c.Recover()
	case CmdSync:
		return "", c.Sync()
	case CmdFailOn:
		c.FailWrites(true)
	case CmdFailOff:
		c.FailWrites(false)
	case CmdStatus:
		st := c.Status()
		return fmt.Sprintf("cut=%t fail-writes=%t fail-io=%s dirty-files=%d dirty-bytes=%d", st.Cut, st.FailWrites, st.FailIO, st.DirtyFiles, st.DirtyBytes), nil
	case CmdFailIO + " write":
		c.FailIO(IOWrite)
	case CmdFailIO + " fsync":
		c.FailIO(IOFsync)
	case CmdFailIO + " off":
		c.FailIO(IONone)
	default:
		return "", fmt.Errorf("unknown command %q", cmd)
	}
	return "", nil
}

// SendControl sends one command to the control socket and returns the reply's detail.
func SendControl(socket, cmd string) (string, error) {
	conn, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return "", fmt.Errorf("lossyfs: control socket: %w (is `qbench lossyfs mount` running?)", err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // a sync of much dirty data can take a while
	if _, err := fmt.Fprintln(conn, cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("lossyfs: control reply: %w", err)
	}
	line = strings.TrimSpace(line)
	if msg, ok := strings.CutPrefix(line, replyErrPref); ok {
		return "", errors.New("lossyfs: " + msg)
	}
	detail, ok := strings.CutPrefix(line, replyOK)
	if !ok {
		return "", fmt.Errorf("lossyfs: unexpected control reply %q", line)
	}
	return strings.TrimSpace(detail), nil
}
