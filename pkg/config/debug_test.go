package config

import (
	"io"
	"strings"
	"testing"
)

func TestDebugAddr(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := func(vars ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(vars); i += 2 {
				if vars[i] == k {
					return vars[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		args    []string
		env     func(string) string
		want    string
		refused bool
	}{
		{nil, env(), "", false}, // off by default
		{nil, env("DEBUG_ADDR", "127.0.0.1:6060"), "127.0.0.1:6060", false},
		{[]string{"--debug-addr", "localhost:6060"}, env("DEBUG_ADDR", "127.0.0.1:6060"), "localhost:6060", false},
		{[]string{"--debug-addr", "[::1]:6060"}, env(), "[::1]:6060", false},
		{[]string{"--debug-addr", "127.8.0.1:0"}, env(), "127.8.0.1:0", false},
		// Not loopback: refused unless --debug-addr-public.
		{[]string{"--debug-addr", "0.0.0.0:6060"}, env(), "", true},
		{[]string{"--debug-addr", ":6060"}, env(), "", true},
		{[]string{"--debug-addr", "10.1.2.3:6060"}, env(), "", true},
		{nil, env("DEBUG_ADDR", "example.com:6060"), "", true},
		{[]string{"--debug-addr", "0.0.0.0:6060", "--debug-addr-public"}, env(), "0.0.0.0:6060", false},
		{nil, env("DEBUG_ADDR", ":6060", "DEBUG_ADDR_PUBLIC", "true"), ":6060", false},
	} {
		got, err := Parse("svc", tt.args, tt.env, d, io.Discard)
		if tt.refused {
			if err == nil || !strings.Contains(err.Error(), "--debug-addr-public") {
				t.Errorf("Parse(%q): %v, want refused naming --debug-addr-public", tt.args, err)
			}
			continue
		}
		if err != nil || got.DebugAddr != tt.want {
			t.Errorf("Parse(%q): DebugAddr %q, %v; want %q", tt.args, got.DebugAddr, err, tt.want)
		}
	}
}

func TestListenerAddrs(t *testing.T) {
	withSite := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db", SiteAddr: "127.0.0.1:3002"}
	none := func(string) string { return "" }
	c, err := Parse("portal", nil, none, withSite, io.Discard)
	if err != nil || c.SiteAddr != "127.0.0.1:3002" || !c.SiteAddrDefault || c.MetricsAddr != "" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	c, err = Parse("portal", []string{"--site-addr", "0.0.0.0:80", "--metrics-addr", "127.0.0.1:9090"}, none, withSite, io.Discard)
	if err != nil || c.SiteAddr != "0.0.0.0:80" || c.SiteAddrDefault || c.MetricsAddr != "127.0.0.1:9090" {
		t.Errorf("flags: %+v, %v", c, err)
	}
	env := func(k string) string { return map[string]string{"SITE_ADDR": "e:3", "METRICS_ADDR": "e:4"}[k] }
	c, err = Parse("portal", nil, env, withSite, io.Discard)
	if err != nil || c.SiteAddr != "e:3" || c.SiteAddrDefault || c.MetricsAddr != "e:4" {
		t.Errorf("env: %+v, %v", c, err)
	}
	// A service without a site has no --site-addr.
	if _, err := Parse("studio", []string{"--site-addr", "x:1"}, none, Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}, io.Discard); err == nil {
		t.Error("studio accepted --site-addr")
	}
}
