package config

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// SandboxLimits are permissions.sandbox_limits: resource limits every
// sandboxed command gets (the kernel's rlimits, set before the command
// starts; a command cannot raise them). 0 or "off" turns one off.
type SandboxLimits struct {
	// Processes is how many processes and threads a command may run at
	// once beyond those already running: under bubblewrap they are
	// counted in the command's own user namespace, under Landlock among
	// all of the user's processes. Root is exempt (the kernel never
	// limits uid 0's processes). Default 128 per CPU, at least 4096.
	Processes int `mapstructure:"processes" yaml:"processes"`
	// Memory is the data size of each process (heap and private
	// mappings, RLIMIT_DATA): "4GiB", "512MiB", or a share of the
	// machine's memory, "75%" (the default). A limit per process: many
	// processes may together take more.
	Memory string `mapstructure:"memory" yaml:"memory"`
	// FileSize is the largest file a command may write (RLIMIT_FSIZE); a
	// process writing past it is stopped (SIGXFSZ). Default "16GiB".
	FileSize string `mapstructure:"file_size" yaml:"file_size"`
	// TmpSize is the size of the private /tmp under bubblewrap (a tmpfs,
	// held in memory): "2GiB" or "25%" (the default) of the machine's
	// memory. The Landlock fallback's TMPDIR lies in the private cache
	// on disk, where only FileSize applies.
	TmpSize string `mapstructure:"tmp_size" yaml:"tmp_size"`
	// CPUTime is the CPU time of each process (RLIMIT_CPU): past it the
	// process is stopped (SIGXCPU). Default 0, none: a long build must
	// not die of it; the command's timeout bounds the wall time.
	CPUTime time.Duration `mapstructure:"cpu_time" yaml:"cpu_time"`
}

// DefaultSandboxLimits are limits a normal build or test run never
// reaches: a build on many cores runs a compiler per core, each with a
// thread per core.
func DefaultSandboxLimits() SandboxLimits {
	return SandboxLimits{Processes: max(4096, 128*runtime.NumCPU()), Memory: "75%", FileSize: "16GiB", TmpSize: "25%"}
}

// ErrSize is returned by SizeBytes for a value that is not a size.
var ErrSize = errors.New(`must be a size such as "4GiB", "512MiB" or "50%" of the machine's memory, or "off"`)

// SizeBytes resolves a size setting against the machine's memory total
// (for "N%"): 0 means no limit ("", "0", "off").
func SizeBytes(s string, total uint64) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" || strings.EqualFold(s, "off") {
		return 0, nil
	}
	if pct, ok := strings.CutSuffix(s, "%"); ok {
		p, err := strconv.ParseFloat(strings.TrimSpace(pct), 64)
		if err != nil || p <= 0 || p > 100 {
			return 0, ErrSize
		}
		return uint64(float64(total) * p / 100), nil
	}
	units := []struct {
		suffix string
		mult   float64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"TB", 1 << 40},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}, {"B", 1}}
	mult := 1.0
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = strings.TrimSpace(n), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 || n*mult >= math.MaxInt64 {
		return 0, ErrSize
	}
	return uint64(n * mult), nil
}

// sandboxLimits checks permissions.sandbox_limits.
func (v *validator) sandboxLimits(l SandboxLimits) {
	const key = "permissions.sandbox_limits"
	if l.Processes < 0 {
		v.add(key+".processes", "must be a number of processes, 0 for no limit (got %d)", l.Processes)
	}
	for _, f := range []struct{ name, value string }{{"memory", l.Memory}, {"file_size", l.FileSize}, {"tmp_size", l.TmpSize}} {
		if _, err := SizeBytes(f.value, 1<<30); err != nil {
			v.add(key+"."+f.name, "%v (got %q)", err, f.value)
		}
	}
	if l.CPUTime < 0 {
		v.add(key+".cpu_time", "must be a duration such as \"30m\", 0 for no limit (got %s)", l.CPUTime)
	}
}
