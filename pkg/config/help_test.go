package config

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestHelpListsEveryFlagAndVariable: --help names every flag with its
// default (the limits included), every variable a flag's usage names, and
// the variables read from the environment alone; a secret given through the
// environment is not printed.
func TestHelpListsEveryFlagAndVariable(t *testing.T) {
	var out bytes.Buffer
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db", SiteAddr: "d:3", Gateways: true,
		Limits: Limits{MaxConns: 4096, MaxInFlight: 256, MaxConnsPerIP: 64, MaxInFlightBytes: 64 << 20}}
	env := map[string]string{"BOOTSTRAP_TOKEN": "s3cret-from-env"}
	_, err := Parse("svc", []string{"--help"}, func(k string) string { return env[k] }, d, &out)
	if !errors.Is(err, ErrHelp) {
		t.Fatalf("--help: %v, want ErrHelp", err)
	}
	help := out.String()
	if strings.Contains(help, "s3cret-from-env") {
		t.Errorf("--help prints the bootstrap token from the environment:\n%s", help)
	}
	// Every flag Parse defines, whatever helper added it.
	var names []string
	for _, line := range strings.Split(help, "\n") {
		if name, ok := strings.CutPrefix(line, "  --"); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	for _, want := range []string{"http-addr", "grpc-addr", "db", "store", "max-conns", "max-inflight", "log-level", "log-format", "shutdown-delay", "version"} {
		if !strings.Contains(help, "\n  --"+want+" ") && !strings.Contains(help, "\n  --"+want+"\n") {
			t.Errorf("--help does not list --%s:\n%s", want, help)
		}
	}
	if got := strings.Count(help, "\n        default: "); got != len(names) {
		t.Errorf("--help gives %d defaults for %d flags", got, len(names))
	}
	for _, want := range []string{"default: 4096", "default: 256", "default: 64\n", "default: 67108864", "default: d:1", "default: d:3", "default: 0s", "default: info", "default: text"} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
	for _, want := range []string{"HTTP_ADDR", "MAX_CONNS", "MAX_INFLIGHT", "MAX_CONNS_PER_IP", "MAX_INFLIGHT_BYTES", "LOG_LEVEL", "SHUTDOWN_DELAY",
		"METRICS_ADDR", "SITE_ADDR", "BOOTSTRAP_TOKEN_FILE", "NODE_SECRET", "NODE_SECRET_FILE", "GATEWAY_REDIS", "GATEWAY_REDIS_PASSWORD",
		"ETCD_USERNAME", "ETCD_PASSWORD", "ETCD_PASSWORD_FILE", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_*"} {
		if !strings.Contains(help, "\n  "+want+" ") {
			t.Errorf("--help does not list the variable %s:\n%s", want, help)
		}
	}
}

func TestVersionFlag(t *testing.T) {
	_, err := Parse("svc", []string{"--version"}, func(string) string { return "" }, Defaults{HTTPAddr: "a", GRPCAddr: "b", DBPath: "c"}, io.Discard)
	if !errors.Is(err, ErrVersion) {
		t.Fatalf("--version: %v, want ErrVersion", err)
	}
}

func TestLogAndShutdownSettings(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	none := func(string) string { return "" }
	for _, tt := range []struct {
		args  []string
		env   map[string]string
		want  Log
		delay time.Duration
		bad   bool
	}{
		{nil, nil, Log{slog.LevelInfo, LogText}, 0, false},
		{[]string{"--log-level", "debug", "--log-format", "json", "--shutdown-delay", "5s"}, nil, Log{slog.LevelDebug, LogJSON}, 5 * time.Second, false},
		{nil, map[string]string{"LOG_LEVEL": "warn", "LOG_FORMAT": "json", "SHUTDOWN_DELAY": "1500ms"}, Log{slog.LevelWarn, LogJSON}, 1500 * time.Millisecond, false},
		{[]string{"--log-level", "error"}, map[string]string{"LOG_LEVEL": "warn"}, Log{slog.LevelError, LogText}, 0, false},
		{[]string{"--log-level", "loud"}, nil, Log{}, 0, true},
		{[]string{"--log-format", "xml"}, nil, Log{}, 0, true},
		{[]string{"--shutdown-delay", "5"}, nil, Log{}, 0, true},
		{[]string{"--shutdown-delay", "-1s"}, nil, Log{}, 0, true},
	} {
		getenv := none
		if tt.env != nil {
			getenv = func(k string) string { return tt.env[k] }
		}
		got, err := Parse("svc", tt.args, getenv, d, io.Discard)
		if tt.bad {
			if err == nil {
				t.Errorf("Parse(%q) accepted", tt.args)
			}
			continue
		}
		if err != nil || got.Log != tt.want || got.ShutdownDelay != tt.delay {
			t.Errorf("Parse(%q, %v): %+v %v, %v; want %+v %v", tt.args, tt.env, got.Log, got.ShutdownDelay, err, tt.want, tt.delay)
		}
	}
}
