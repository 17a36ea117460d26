package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
)

// logFlags are serve's logging flags: -v as kube-apiserver's verbosity
// (2 and above logs every request) and --log-format.
type logFlags struct {
	verbosity int
	format    string
}

func (f *logFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.verbosity, "v", 0, "log verbosity: 0 logs start-up, failures and state changes; 2 also every request (verb, path, user, status, latency); 4 debug")
	fs.StringVar(&f.format, "log-format", "text", "log format: text or json")
}

// logger returns the logger the flags ask for, writing to w: -v N logs
// from slog.Level(-N) up, so that -v 2 shows server.RequestLogLevel.
func (f *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	if f.verbosity < 0 {
		return nil, fmt.Errorf("%w: -v %d: want 0 or more", errUsage, f.verbosity)
	}
	opts := &slog.HandlerOptions{Level: slog.Level(-f.verbosity), ReplaceAttr: verbosityLevels}
	switch f.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format %q: want text or json", errUsage, f.format)
}

// verbosityLevels names the levels below Info by the -v that shows them
// ("V2" for server.RequestLogLevel, "V4" for Debug), as klog does.
func verbosityLevels(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 || a.Key != slog.LevelKey {
		return a
	}
	if l, ok := a.Value.Any().(slog.Level); ok && l < slog.LevelInfo {
		return slog.String(slog.LevelKey, fmt.Sprintf("V%d", -int(l)))
	}
	return a
}
