package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// profileKey is the configuration line naming a CPU profile of listwatch's
// unpaced 1,000-watcher fan-out, one line per run.
const profileKey = "peer-cpuprofile-" + lwCache

// showListwatch limits a pprof listing to listwatch's own functions.
const showListwatch = "-show=^github.com/listwatch/"

// profileTimeout bounds each go tool pprof call.
const profileTimeout = 2 * time.Minute

// printProfile writes the summary of the fan-out CPU profiles at paths,
// merged: the 15 functions with the most CPU of their own (flat) with their
// cumulative share, then listwatch's own functions by cumulative share. The
// profiles cover the whole process (the cacher, the benchmark's watchers
// and writer, and the embedded etcd) from the first put to the last
// delivery.
func printProfile(w io.Writer, paths []string) error {
	fmt.Fprintf(w, "CPU profile of listwatch's fan-out (1,000 watchers, writer unpaced; whole process; %d run(s) merged): %v\n\n",
		len(paths), paths)
	for _, args := range [][]string{
		{"-top", "-nodecount=15"},
		{"-top", "-cum", "-nodecount=15", showListwatch},
	} {
		out, err := pprofTop(args, paths)
		if err != nil {
			return err
		}
		note := ""
		if args[len(args)-1] == showListwatch {
			note = " (listwatch's functions by cumulative share; with -show a function's flat also counts its hidden callees)"
		}
		fmt.Fprintf(w, "go tool pprof %v%s:\n%s\n", args, note, out)
	}
	return nil
}

// pprofTop runs go tool pprof with args over paths and returns its output.
func pprofTop(args, paths []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), profileTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), append(append([]string{"tool", "pprof"}, args...), paths...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof %v: %w", args, err)
	}
	return out, nil
}

// goTool is the go command: the one on PATH, else the one of the Go
// installation benchtable was built with.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
