package ui

import (
	"strings"
	"testing"
)

func TestLineValue(t *testing.T) {
	for _, tt := range []struct {
		line, want string
		ok         bool
	}{
		{`  "listen_path": "/orders/",`, "s:/orders/", true},
		{`"name": "a \"b\" \u003c",`, `s:a "b" <`, true},
		{`"rate": 1.50`, "n:1.50", true},
		{`  "x",`, "s:x", true},
		{`  12,`, "n:12", true},
		{`"active": true,`, "", false},
		{`"proxy": {`, "", false},
		{`"list": [],`, "", false},
		{`"empty": "",`, "", false},
		{`},`, "", false},
		{`"broken`, "", false},
	} {
		got, ok := lineValue(tt.line)
		if got != tt.want || ok != tt.ok {
			t.Errorf("lineValue(%q) = %q, %v; want %q, %v", tt.line, got, ok, tt.want, tt.ok)
		}
	}
}

// TestCompare: values carried over under other names stay unmarked; a
// value only one side holds is marked; user text is escaped.
func TestCompare(t *testing.T) {
	classic := `{"api_id":"a1","name":"<b>Orders</b>","proxy":{"listen_path":"/orders/"},"transform_jq":"dropped"}`
	oas := `{"info":{"title":"<b>Orders</b>"},"x-tyk-api-gateway":{"info":{"id":"a1"},"server":{"listenPath":{"value":"/orders/"}}},"openapi":"3.0.6"}`
	d := compare([]byte(classic), []byte(oas))
	if d.Dropped != 1 || d.Added != 1 {
		t.Fatalf("marked %d classic and %d OAS lines, want 1 and 1:\n%s\n%s", d.Dropped, d.Added, d.Classic, d.OAS)
	}
	if !strings.Contains(string(d.Classic), `<span class="ln chg">  &#34;transform_jq&#34;: &#34;dropped&#34;</span>`) {
		t.Errorf("classic side: %s", d.Classic)
	}
	if !strings.Contains(string(d.OAS), `<span class="ln chg">  &#34;openapi&#34;: &#34;3.0.6&#34;</span>`) {
		t.Errorf("OAS side: %s", d.OAS)
	}
	if strings.Contains(string(d.Classic)+string(d.OAS), "<b>") {
		t.Error("document text reached the page as markup")
	}
}
