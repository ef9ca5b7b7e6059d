package config

import (
	"errors"
	"io"
	"reflect"
	"slices"
	"strings"
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
		{"defaults", nil, false, bbolt("d:1", "d:2", "d.db", "")},
		{"env", nil, true, bbolt("e:1", "e:2", "e.db", "etok")},
		{"flags", []string{"--http-addr", "f:1", "--grpc-addr=f:2", "--db", "f.db", "--bootstrap-token", "ftok"}, true, bbolt("f:1", "f:2", "f.db", "ftok")},
		{"one flag", []string{"--db", "f.db"}, true, bbolt("e:1", "e:2", "f.db", "etok")},
	}
	for _, tt := range tests {
		g := func(string) string { return "" }
		if tt.env {
			g = getenv
		}
		got, err := Parse("svc", tt.args, g, d, io.Discard)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func bbolt(httpAddr, grpcAddr, db, token string) Config {
	return Config{HTTPAddr: httpAddr, GRPCAddr: grpcAddr, DBPath: db, BootstrapToken: token, Store: StoreBbolt,
		Etcd: Etcd{Prefix: "/gatehouse/svc/"}, Log: Log{Format: LogText}}
}

func TestEtcdSettings(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := map[string]string{"STORE": "etcd", "ETCD_ENDPOINTS": "a:2379, http://b:2379,", "ETCD_CACERT": "ca.pem",
		"ETCD_CERT": "c.pem", "ETCD_KEY": "k.pem", "ETCD_USERNAME": "u", "ETCD_PASSWORD": "p"}
	got, err := Parse("svc", nil, func(k string) string { return env[k] }, d, io.Discard)
	want := Config{HTTPAddr: "d:1", GRPCAddr: "d:2", Store: StoreEtcd, Etcd: Etcd{Endpoints: []string{"a:2379", "http://b:2379"},
		Prefix: "/gatehouse/svc/", CACert: "ca.pem", Cert: "c.pem", Key: "k.pem", Username: "u", Password: "p"}, Log: Log{Format: LogText}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("etcd from the environment: %+v, %v; want %+v", got, err, want)
	}
	got, err = Parse("svc", []string{"--store=etcd", "--etcd-endpoints", "f:1", "--etcd-prefix", "/p/"}, func(k string) string { return env[k] }, d, io.Discard)
	if err != nil || !slices.Equal(got.Etcd.Endpoints, []string{"f:1"}) || got.Etcd.Prefix != "/p/" {
		t.Fatalf("etcd flags: %+v, %v", got, err)
	}
}

func TestEtcdWithDBRefused(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	tests := []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--store", "etcd", "--etcd-endpoints", "a:1", "--db", "x.db"}, nil, "--db"},
		{[]string{"--store", "etcd", "--etcd-endpoints", "a:1"}, map[string]string{"DB_PATH": "x.db"}, "--db"},
		{[]string{"--store", "etcd"}, nil, "--etcd-endpoints"},
		{[]string{"--store", "mongo"}, nil, "bbolt or etcd"},
		{[]string{"--store", "etcd", "--etcd-endpoints", "a:1", "--etcd-cert", "c.pem"}, nil, "--etcd-key"},
	}
	for _, tt := range tests {
		_, err := Parse("svc", tt.args, func(k string) string { return tt.env[k] }, d, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q, env %v): %v, want a refusal naming %s", tt.args, tt.env, err, tt.want)
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
	// Main prefixes the service name: the error must not name it again.
	if _, err := Parse("svc", []string{"extra"}, none, d, io.Discard); err == nil || strings.Contains(err.Error(), "svc") {
		t.Errorf("an extra argument: %v, want an error without the service name", err)
	}
	if _, err := Parse("svc", []string{"-h"}, none, d, io.Discard); !errors.Is(err, ErrHelp) {
		t.Errorf("-h: %v, want ErrHelp", err)
	}
}

func TestLimitFlags(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := func(k string) string { return map[string]string{"MAX_CONNS": "10", "MAX_INFLIGHT": "5"}[k] }
	got, err := Parse("svc", []string{"--max-inflight", "7"}, env, d, io.Discard)
	if err != nil || got.Limits.MaxConns != 10 || got.Limits.MaxInFlight != 7 {
		t.Errorf("limits %+v, %v; want MaxConns 10 (env), MaxInFlight 7 (flag)", got.Limits, err)
	}
	for _, args := range [][]string{{"--max-conns", "-1"}, {"--max-inflight", "x"}} {
		if _, err := Parse("svc", args, func(string) string { return "" }, d, io.Discard); err == nil {
			t.Errorf("Parse(%q) accepted a bad limit", args)
		}
	}
	if _, err := Parse("svc", nil, func(k string) string { return map[string]string{"MAX_CONNS": "many"}[k] }, d, io.Discard); err == nil {
		t.Error("MAX_CONNS=many accepted")
	}
}

func TestEtcdMaxRequestBytes(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := map[string]string{"ETCD_MAX_REQUEST_BYTES": "8388608"}
	got, err := Parse("svc", []string{"--store", "etcd", "--etcd-endpoints", "a:1"}, func(k string) string { return env[k] }, d, io.Discard)
	if err != nil || got.Etcd.MaxRequestBytes != 8388608 {
		t.Errorf("from the environment: %d, %v; want 8388608", got.Etcd.MaxRequestBytes, err)
	}
	got, err = Parse("svc", []string{"--store", "etcd", "--etcd-endpoints", "a:1", "--etcd-max-request-bytes", "4194304"}, func(k string) string { return env[k] }, d, io.Discard)
	if err != nil || got.Etcd.MaxRequestBytes != 4194304 {
		t.Errorf("flag over environment: %d, %v; want 4194304", got.Etcd.MaxRequestBytes, err)
	}
}

func TestTLSSettings(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db"}
	env := map[string]string{"TLS_CERT_FILE": "e.crt", "TLS_KEY_FILE": "e.key", "GRPC_CLIENT_CA_FILE": "e-ca.pem"}
	got, err := Parse("svc", nil, func(k string) string { return env[k] }, d, io.Discard)
	if want := (TLS{CertFile: "e.crt", KeyFile: "e.key", ClientCAFile: "e-ca.pem"}); err != nil || got.TLS != want {
		t.Fatalf("TLS from the environment: %+v, %v; want %+v", got.TLS, err, want)
	}
	got, err = Parse("svc", []string{"--tls-cert-file", "f.crt", "--tls-key-file=f.key"}, func(string) string { return "" }, d, io.Discard)
	if want := (TLS{CertFile: "f.crt", KeyFile: "f.key"}); err != nil || got.TLS != want || !got.TLS.On() {
		t.Fatalf("TLS flags: %+v, %v; want %+v", got.TLS, err, want)
	}
	for _, args := range [][]string{
		{"--tls-cert-file", "f.crt"},
		{"--tls-key-file", "f.key"},
		{"--grpc-client-ca-file", "ca.pem"},
	} {
		if _, err := Parse("svc", args, func(string) string { return "" }, d, io.Discard); err == nil || !strings.Contains(err.Error(), "--tls-") {
			t.Errorf("%v: %v, want an error naming the missing TLS file", args, err)
		}
	}
}
