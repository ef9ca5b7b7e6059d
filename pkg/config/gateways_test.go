package config

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGatewaySettings: management's Tyk Gateway settings (Defaults.Gateways)
// — the node secret by flag, file or environment, the Redis URL, its
// password from the environment only — and their absence elsewhere.
func TestGatewaySettings(t *testing.T) {
	d := Defaults{HTTPAddr: "d:1", GRPCAddr: "d:2", DBPath: "d.db", Gateways: true}
	secret := filepath.Join(t.TempDir(), "node-secret")
	const long = "a-node-secret-of-32-bytes-000000"
	if err := os.WriteFile(secret, []byte("from-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		want    Gateways
		wantErr string
	}{
		{"none", nil, nil, Gateways{}, ""},
		{"file flag", []string{"--node-secret-file", secret}, nil, Gateways{NodeSecret: "from-file-0123456789"}, ""},
		{"env file", nil, map[string]string{"NODE_SECRET_FILE": secret}, Gateways{NodeSecret: "from-file-0123456789"}, ""},
		{"env and redis", nil, map[string]string{"NODE_SECRET": long, "GATEWAY_REDIS": "redis://r:6379", "GATEWAY_REDIS_PASSWORD": "pw"},
			Gateways{NodeSecret: long, Redis: "redis://r:6379", RedisPassword: "pw"}, ""},
		{"redis flag", []string{"--node-secret", long, "--gateway-redis", "rediss://r:6380/1"}, nil, Gateways{NodeSecret: long, Redis: "rediss://r:6380/1"}, ""},
		{"short secret", []string{"--node-secret", long[:15]}, nil, Gateways{}, "15 bytes, under 16"},
		{"short secret, insecure", []string{"--node-secret", "s", "--node-secret-insecure"}, nil, Gateways{NodeSecret: "s"}, ""},
		{"redis without a secret", []string{"--gateway-redis", "redis://r"}, nil, Gateways{}, "needs the node secret"},
		{"secret twice", []string{"--node-secret", "s", "--node-secret-file", secret}, nil, Gateways{}, "give one of them"},
		{"gateway API by flags", []string{"--gateway-api-url", "http://gw:8080", "--gateway-api-secret-file", secret}, nil,
			Gateways{APIURL: "http://gw:8080", APISecret: "from-file-0123456789"}, ""},
		{"gateway API by env", nil, map[string]string{"GATEWAY_API_URL": "https://gw", "GATEWAY_API_SECRET_FILE": secret},
			Gateways{APIURL: "https://gw", APISecret: "from-file-0123456789"}, ""},
		{"gateway API without its secret", []string{"--gateway-api-url", "http://gw:8080"}, nil, Gateways{}, "needs the gateways' secret"},
		{"gateway API URL with credentials", []string{"--gateway-api-url", "http://u:hunter2@gw", "--gateway-api-secret-file", secret}, nil, Gateways{}, "must not carry credentials"},
		{"gateway API URL not http", []string{"--gateway-api-url", "gw:8080", "--gateway-api-secret-file", secret}, nil, Gateways{}, "must be an http:// or https:// URL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("management", tt.args, func(k string) string { return tt.env[k] }, d, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || c.Gateways != tt.want {
				t.Fatalf("got %+v, %v; want %+v", c.Gateways, err, tt.want)
			}
		})
	}
	// studio and portal have no such flags
	d.Gateways = false
	if _, err := Parse("studio", []string{"--node-secret", "s"}, func(string) string { return "" }, d, io.Discard); err == nil {
		t.Fatal("--node-secret accepted by a service without gateways")
	}
}
