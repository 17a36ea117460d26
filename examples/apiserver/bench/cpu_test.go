package bench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

// processCPU returns the user plus system CPU time this process has used
// (getrusage(RUSAGE_SELF): the server, the in-process etcd and the
// in-process clients together).
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startProfile starts a CPU profile of the process and returns the
// function that stops it and returns the share of the profile's CPU time
// spent in goroutines labelled bench=client (the fan-out's clients; -1 if
// the profile could not be read). With -apiserver.cpuprofile the profile
// is also written there, named after the storage, the protocol, the
// watcher count and the pace.
func startProfile(b *testing.B, kind server.Storage, proto protocol, watchers int, pace time.Duration) (stop func() float64) {
	b.Helper()
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		b.Fatalf("cpu profile: %v", err)
	}
	return func() float64 {
		pprof.StopCPUProfile()
		if *flagProfile != "" {
			if err := os.MkdirAll(*flagProfile, 0o755); err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("%s-%s-%d", kind, proto, watchers)
			if pace > 0 {
				name += "-pace" + pace.String()
			}
			if err := os.WriteFile(filepath.Join(*flagProfile, name+".pprof"), buf.Bytes(), 0o644); err != nil {
				b.Errorf("cpu profile: %v", err)
			}
		}
		share, err := labelShare(buf.Bytes(), "bench", "client")
		if err != nil {
			b.Logf("cpu profile: %v", err)
			return -1
		}
		return share
	}
}

// labelShare reads a gzipped pprof CPU profile and returns the share of
// its CPU time in samples that carry the label key=value. It reads the
// profile.proto fields it needs with protowire: Profile.sample (2),
// Profile.string_table (6), Sample.value (2, the last one: CPU
// nanoseconds), Sample.label (3), Label.key (1) and Label.str (2).
func labelShare(gz []byte, key, value string) (float64, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return 0, err
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return 0, err
	}
	var strs []string
	type sample struct {
		ns     int64
		labels [][2]int64 // key and str indexes into strs
	}
	var samples []sample
	err = eachField(data, func(num protowire.Number, typ protowire.Type, v []byte) error {
		switch {
		case num == 6 && typ == protowire.BytesType:
			strs = append(strs, string(v))
		case num == 2 && typ == protowire.BytesType:
			var sm sample
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
				switch {
				case num == 2 && typ == protowire.BytesType: // packed values
					for len(v) > 0 {
						x, n := protowire.ConsumeVarint(v)
						if n < 0 {
							return protowire.ParseError(n)
						}
						sm.ns, v = int64(x), v[n:]
					}
				case num == 2 && typ == protowire.VarintType:
					x, _ := protowire.ConsumeVarint(v)
					sm.ns = int64(x)
				case num == 3 && typ == protowire.BytesType:
					var l [2]int64
					err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte) error {
						if typ == protowire.VarintType && (num == 1 || num == 2) {
							x, _ := protowire.ConsumeVarint(v)
							l[num-1] = int64(x)
						}
						return nil
					})
					if err != nil {
						return err
					}
					sm.labels = append(sm.labels, l)
				}
				return nil
			})
			if err != nil {
				return err
			}
			samples = append(samples, sm)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	var total, labelled int64
	for _, sm := range samples {
		total += sm.ns
		for _, l := range sm.labels {
			if int(l[0]) < len(strs) && int(l[1]) < len(strs) && strs[l[0]] == key && strs[l[1]] == value {
				labelled += sm.ns
				break
			}
		}
	}
	if total == 0 {
		return 0, fmt.Errorf("no samples")
	}
	return float64(labelled) / float64(total), nil
}

// eachField calls f with each field of the protobuf message data: for a
// varint its encoding, for bytes their contents.
func eachField(data []byte, f func(protowire.Number, protowire.Type, []byte) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		var v []byte
		switch typ {
		case protowire.BytesType:
			b, m := protowire.ConsumeBytes(data)
			if m < 0 {
				return protowire.ParseError(m)
			}
			v, n = b, m
		default:
			m := protowire.ConsumeFieldValue(num, typ, data)
			if m < 0 {
				return protowire.ParseError(m)
			}
			v, n = data[:m], m
		}
		if err := f(num, typ, v); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// clockTick is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// machineCPU returns the CPU time all processes on the machine have used
// (the busy fields of /proc/stat's cpu line), or -1 where /proc/stat cannot
// be read: with processCPU it tells how much of the machine others used
// while this process was measured.
func machineCPU() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return -1
	}
	var busy int64
	// user nice system idle iowait irq softirq steal: all but idle and iowait.
	for i, f := range fields[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return -1
		}
		busy += n
	}
	return time.Duration(busy) * clockTick
}
