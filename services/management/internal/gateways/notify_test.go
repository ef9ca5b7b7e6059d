package gateways

import (
	"strings"
	"testing"
)

func TestNewRedisKeepsSecretsOffTheCommandLine(t *testing.T) {
	for _, c := range []struct {
		url, wantErr string
	}{
		{"redis://127.0.0.1:6379/0", ""},
		{"rediss://user@redis.internal:6380", ""},
		{"redis://:hunter2@127.0.0.1:6379", "carries a password"},
		{"redis://user:hunter2@127.0.0.1:6379", "carries a password"},
		{"redis://:hunter2@127.0.0.1:%zz", "not a valid URL"},
		{"http://127.0.0.1:6379", "--gateway-redis"},
	} {
		client, err := NewRedis(c.url, "")
		if client != nil {
			client.Close()
		}
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("NewRedis(%q): %v, want a client", c.url, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("NewRedis(%q): error %v, want one saying %q", c.url, err, c.wantErr)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("NewRedis(%q): error %q repeats the password", c.url, err)
		}
	}
}
