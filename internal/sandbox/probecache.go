package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The bwrap probe (bwrap run in new namespaces around `true`) is a fork,
// two execs and the namespaces made and torn down: ~5 ms of CPU, a fifth
// of a short `odin run`'s, every process. Its outcome depends on the
// bwrap binary and on the host (kernel, sysctls, the namespaces and
// privileges Odin runs in), not on the session, so a pass is recorded in
// Odin's state directory with a fingerprint of all that and reused by the
// next processes for probeRecordTTL. The record also says whether that
// bwrap knows --size (its `--help` read, another fork and exec): that is
// a property of the bwrap binary the fingerprint names. Only a pass is recorded: a stale
// record can only pick bubblewrap where it no longer works, and then the
// first command fails (bwrap refuses to start it) instead of running less
// confined, and that failure removes the record (Process.Release), so the
// next process probes again. A failed probe is never recorded, so a fixed
// host is seen at once.

// probeRecordTTL bounds how long a recorded pass is believed: what the
// fingerprint cannot see (an LSM policy loaded since) is probed again at
// least this often.
const probeRecordTTL = time.Hour

// probeRecordVersion starts every record; a record of another format is
// ignored (and replaced at the next pass).
const probeRecordVersion = "odin-bwrap-probe-2"

// probeRecordMax bounds the read of a record.
const probeRecordMax = 4 << 10

// The last field of a record: whether the bwrap knows --size.
const (
	recordSize   = "size"
	recordNoSize = "nosize"
)

// recordedPass reports whether record holds a pass of the probe for the
// host as fingerprint describes it, recorded less than probeRecordTTL
// before now, and if so whether the bwrap knows --size.
func recordedPass(record, fingerprint string, now time.Time) (pass, size bool) {
	if record == "" || fingerprint == "" {
		return false, false
	}
	f, err := os.Open(record)
	if err != nil {
		return false, false
	}
	defer f.Close()
	buf := make([]byte, probeRecordMax)
	n, _ := f.Read(buf)
	fields := strings.Fields(string(buf[:n]))
	if len(fields) != 4 || fields[0] != probeRecordVersion || fields[2] != fingerprint ||
		(fields[3] != recordSize && fields[3] != recordNoSize) {
		return false, false
	}
	sec, err := strconv.ParseInt(fields[1], 10, 64)
	if err != nil {
		return false, false
	}
	at := time.Unix(sec, 0)
	// A record from the future (a clock set back) is not believed.
	if at.After(now) || now.Sub(at) >= probeRecordTTL {
		return false, false
	}
	return true, fields[3] == recordSize
}

// recordPass records a pass of the probe for fingerprint at now, with
// whether the bwrap knows --size. A failure to write only means the next
// process probes again.
//
// The record is renamed into place but not synced: a short command often
// exits moments after its probe, and two fsyncs would keep the record
// from ever being written. A record lost or truncated by a crash reads as
// no record. The temporary file is named as fsutil names its own, so
// that a later atomic write in the state directory sweeps one left by a
// killed process.
func recordPass(record, fingerprint string, size bool, now time.Time) {
	if record == "" || fingerprint == "" {
		return
	}
	sizeField := recordNoSize
	if size {
		sizeField = recordSize
	}
	line := fmt.Sprintf("%s %d %s %s\n", probeRecordVersion, now.Unix(), fingerprint, sizeField)
	dir, base := filepath.Split(record)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.odin-%d-%08x.tmp", base, os.Getpid(), rand.Uint32()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return
	}
	_, err = f.WriteString(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, record)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
}

// forgetPass removes a recorded pass: bwrap failed to start a command.
func forgetPass(record string) {
	if record != "" {
		_ = os.Remove(record)
	}
}

// probeFingerprint digests what decides whether bwrap at bwrapPath can
// make its namespaces here: the bwrap binary (path, identity, size, time,
// mode with its setuid bit) and the `true` it runs, and the host and
// process state hostState reads. Empty when that cannot be read: then
// nothing is recorded or believed.
func probeFingerprint(bwrapPath, truePath string) string {
	var b strings.Builder
	for _, p := range []string{bwrapPath, truePath} {
		id, ok := fileIdentity(p)
		if !ok {
			return ""
		}
		fmt.Fprintf(&b, "file %s %s\n", p, id)
	}
	host, ok := hostState()
	if !ok {
		return ""
	}
	b.WriteString(host)
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:])
}
