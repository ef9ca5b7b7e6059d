package config

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBootstrapTokenFile(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lf, crlf, bare, empty := file("lf", "tok-lf\n"), file("crlf", "tok-crlf\r\n"), file("bare", "tok-bare"), file("empty", "\n")
	two := file("two", "a\nb\n")
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"flag file, newline stripped", []string{"--bootstrap-token-file", lf}, nil, "tok-lf", ""},
		{"CRLF stripped", []string{"--bootstrap-token-file=" + crlf}, nil, "tok-crlf", ""},
		{"no newline", []string{"--bootstrap-token-file", bare}, nil, "tok-bare", ""},
		{"env file", nil, map[string]string{"BOOTSTRAP_TOKEN_FILE": lf}, "tok-lf", ""},
		{"env value", nil, map[string]string{"BOOTSTRAP_TOKEN": "tok-env"}, "tok-env", ""},
		{"flag file wins over env", []string{"--bootstrap-token-file", bare}, map[string]string{"BOOTSTRAP_TOKEN": "tok-env"}, "tok-bare", ""},
		{"flag wins over env file", []string{"--bootstrap-token", "tok-flag"}, map[string]string{"BOOTSTRAP_TOKEN_FILE": lf}, "tok-flag", ""},
		{"none", nil, nil, "", ""},
		{"both flags", []string{"--bootstrap-token", "x", "--bootstrap-token-file", lf}, nil, "", "give one of them"},
		{"both env", nil, map[string]string{"BOOTSTRAP_TOKEN": "x", "BOOTSTRAP_TOKEN_FILE": lf}, "", "give one of them"},
		{"missing file", []string{"--bootstrap-token-file", filepath.Join(dir, "nope")}, nil, "", "nope"},
		{"empty file", []string{"--bootstrap-token-file", empty}, nil, "", "is empty"},
		{"two lines", []string{"--bootstrap-token-file", two}, nil, "", "more than one line"},
	} {
		got, err := Parse("svc", tt.args, func(k string) string { return tt.env[k] }, d, io.Discard)
		switch {
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && (err != nil || got.BootstrapToken != tt.want):
			t.Errorf("%s: token %q, %v; want %q", tt.name, got.BootstrapToken, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "tok-") {
			t.Errorf("%s: the error %q shows the secret", tt.name, err)
		}
	}
}

func TestEtcdPasswordFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(p, []byte("pw-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"STORE": "etcd", "ETCD_ENDPOINTS": "a:2379", "ETCD_PASSWORD_FILE": p}
	c, err := Parse("svc", nil, func(k string) string { return env[k] }, Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2"}, io.Discard)
	if err != nil || c.Etcd.Password != "pw-secret" {
		t.Errorf("ETCD_PASSWORD_FILE: %q, %v", c.Etcd.Password, err)
	}
}

func TestRedactArgs(t *testing.T) {
	Parse("svc", nil, func(string) string { return "" }, Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}, io.Discard)
	for _, tt := range []struct{ in, want []string }{
		{[]string{"--bootstrap-token", "s3cret", "--db", "x"}, []string{"--bootstrap-token", Redacted, "--db", "x"}},
		{[]string{"-bootstrap-token=s3cret"}, []string{"-bootstrap-token=" + Redacted}},
		{[]string{"--bootstrap-token=s3cret", "--http-addr", "a:1"}, []string{"--bootstrap-token=" + Redacted, "--http-addr", "a:1"}},
		{[]string{"--bootstrap-token-file", "/run/tok"}, []string{"--bootstrap-token-file", "/run/tok"}}, // a path is no secret
		{[]string{"--db", "--bootstrap-token"}, []string{"--db", "--bootstrap-token"}},
	} {
		if got := RedactArgs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("RedactArgs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
