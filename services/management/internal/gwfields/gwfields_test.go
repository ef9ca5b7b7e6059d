package gwfields

import "testing"

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		c    *Checker
		doc  string
		want string // "" when accepted
	}{
		{"policy", Policy, `{"name":"p","rate":10.5,"per":1,"quota_max":-1,"active":true,"tags":["a"],"access_rights":{"x":{"api_id":"x","versions":["Default"],"limit":{"rate":1}}},"meta_data":{"any":["thing",1]}}`, ""},
		{"nulls", Policy, `{"rate":null,"access_rights":null,"tags":[null]}`, ""},
		{"rate as text", Policy, `{"rate":"fast"}`, "rate must be a number"},
		{"active as text", Policy, `{"active":"yes"}`, "active must be a boolean"},
		{"fractional quota", Policy, `{"quota_max":1.5}`, "quota_max must be an integer"},
		{"nested", Policy, `{"access_rights":{"a":{"versions":"Default"}}}`, "access_rights.a.versions must be an array"},
		{"array element", Policy, `{"tags":["a",1]}`, "tags[1] must be a string"},
		{"classic", Classic, `{"name":"c","active":true,"proxy":{"listen_path":"/c/","target_url":"http://u","transport":{"ssl_min_version":771}},"version_data":{"not_versioned":true,"versions":{"Default":{"name":"Default"}}},"x-unknown":{"a":"b"}}`, ""},
		{"classic active", Classic, `{"active":"yes"}`, "active must be a boolean"},
		{"classic listen port", Classic, `{"listen_port":"8080"}`, "listen_port must be an integer"},
		{"classic proxy", Classic, `{"proxy":"http://u"}`, "proxy must be an object"},
		{"negative unsigned", Classic, `{"proxy":{"transport":{"ssl_min_version":-1}}}`, "proxy.transport.ssl_min_version must be a non-negative integer"},
		{"version map", Classic, `{"version_data":{"versions":{"v1":{"use_extended_paths":"true"}}}}`, "version_data.versions.v1.use_extended_paths must be a boolean"},
	} {
		err := c.c.Check([]byte(c.doc))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
