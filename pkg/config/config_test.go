package config

import (
	"errors"
	"io"
	"testing"
)

func TestFlagsWinOverEnv(t *testing.T) {
	env := map[string]string{"HTTP_ADDR": "e:1", "GRPC_ADDR": "e:2", "DB_PATH": "e.db", "BOOTSTRAP_TOKEN": "etok"}
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		name string
		args []string
		env  bool
		want Config
	}{
		{"defaults", nil, false, Config{"d:1", "d:2", "d.db", ""}},
		{"env", nil, true, Config{"e:1", "e:2", "e.db", "etok"}},
		{"flags", []string{"--http-addr", "f:1", "--grpc-addr=f:2", "--db", "f.db", "--bootstrap-token", "ftok"}, true, Config{"f:1", "f:2", "f.db", "ftok"}},
		{"one flag", []string{"--db", "f.db"}, true, Config{"e:1", "e:2", "f.db", "etok"}},
	}
	for _, tt := range tests {
		g := func(string) string { return "" }
		if tt.env {
			g = getenv
		}
		got, err := Parse("svc", tt.args, g, d, io.Discard)
		if err != nil || got != tt.want {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestBadArguments(t *testing.T) {
	none := func(string) string { return "" }
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	for _, args := range [][]string{{"--nope"}, {"extra"}, {"--db", ""}, {"--http-addr="}} {
		if _, err := Parse("svc", args, none, d, io.Discard); err == nil {
			t.Errorf("Parse(%q) accepted bad arguments", args)
		}
	}
	if _, err := Parse("svc", []string{"-h"}, none, d, io.Discard); !errors.Is(err, ErrHelp) {
		t.Errorf("-h: %v, want ErrHelp", err)
	}
}
