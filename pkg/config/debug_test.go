package config

import (
	"io"
	"testing"
)

func TestDebugAddr(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := func(k string) string { return map[string]string{"DEBUG_ADDR": "e:6060"}[k] }
	for _, tt := range []struct {
		args []string
		env  func(string) string
		want string
	}{
		{nil, func(string) string { return "" }, ""}, // off by default
		{nil, env, "e:6060"},
		{[]string{"--debug-addr", "f:6060"}, env, "f:6060"},
	} {
		got, err := Parse("svc", tt.args, tt.env, d, io.Discard)
		if err != nil || got.DebugAddr != tt.want {
			t.Errorf("Parse(%q): DebugAddr %q, %v; want %q", tt.args, got.DebugAddr, err, tt.want)
		}
	}
}
