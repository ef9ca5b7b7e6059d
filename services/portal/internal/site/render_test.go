package site

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse/gatehouse/services/portal/internal/site/xsstest"
	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

func TestSourceChoosesTheStoredText(t *testing.T) {
	tests := []struct {
		name         string
		page         store.Page
		wantText     string
		wantMarkdown bool
	}{
		{"html", store.Page{Content: "<p>c</p>", MarkdownContent: "# md"}, "<p>c</p>", false},
		{"markdown source", store.Page{MarkdownEnabled: true, Content: "c", MarkdownContent: "# md"}, "# md", true},
		{"markdown in content", store.Page{MarkdownEnabled: true, Content: "# c"}, "# c", true},
		{"nothing", store.Page{MarkdownEnabled: true}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, md := Source(tt.page)
			if text != tt.wantText || md != tt.wantMarkdown {
				t.Errorf("got %q, %v; want %q, %v", text, md, tt.wantText, tt.wantMarkdown)
			}
		})
	}
}

func TestRenderFollowsTheRules(t *testing.T) {
	tests := []struct {
		name    string
		page    store.Page
		want    []string // substrings of the output
		notWant []string
	}{
		{
			name:    "html as given",
			page:    store.Page{Content: "<h2>Intro</h2><p># not a heading</p>", MarkdownContent: "## From markdown"},
			want:    []string{`<h2 id="intro">Intro</h2>`, "<p># not a heading</p>"},
			notWant: []string{"From markdown"},
		},
		{
			name:    "markdown content wins",
			page:    store.Page{MarkdownEnabled: true, Content: "## From content", MarkdownContent: "## From markdown"},
			want:    []string{`<h2 id="from-markdown">From markdown</h2>`},
			notWant: []string{"From content"},
		},
		{
			name: "content read as markdown",
			page: store.Page{MarkdownEnabled: true, Content: "## From content\n\n*em*"},
			want: []string{`<h2 id="from-content">From content</h2>`, "<em>em</em>"},
		},
		{
			name: "github tables",
			page: store.Page{MarkdownEnabled: true, Content: "| a | b |\n|---|---|\n| 1 | 2 |\n"},
			want: []string{"<table>", "<th>a</th>", "<td>2</td>"},
		},
		{
			name:    "highlighted fenced code with classes, no inline style",
			page:    store.Page{MarkdownEnabled: true, Content: "```go\nfunc main() { return }\n```\n"},
			want:    []string{`<pre class="chroma">`, `<span class="kd">func</span>`},
			notWant: []string{"style="},
		},
		{
			name: "links are nofollow noopener",
			page: store.Page{MarkdownEnabled: true, Content: "[out](https://example.com/x) [in](/products/1)"},
			want: []string{`href="https://example.com/x" rel="nofollow noreferrer noopener"`, `href="/products/1" rel="nofollow noopener"`},
		},
		{
			name: "raw html in markdown is sanitised, not dropped",
			page: store.Page{MarkdownEnabled: true, Content: "<b>bold</b><script>x()</script>"},
			want: []string{"<b>bold</b>"}, notWant: []string{"script", "x()"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Render(tt.page)
			if err != nil {
				t.Fatal(err)
			}
			out := string(b.HTML)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestHeadingsMakeATableOfContents(t *testing.T) {
	b, err := Render(store.Page{MarkdownEnabled: true, Content: "# Top\n\n## Install\n\n### On Linux\n\n## Install\n\n#### deep\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Heading{{2, "top", "Top"}, {2, "install", "Install"}, {3, "on-linux", "On Linux"}, {2, "install-1", "Install"}}
	if len(b.Headings) != len(want) {
		t.Fatalf("headings: got %+v, want %+v", b.Headings, want)
	}
	for i := range want {
		if b.Headings[i] != want[i] {
			t.Errorf("heading %d: got %+v, want %+v", i, b.Headings[i], want[i])
		}
	}
	// HTML headings without an id get one.
	b, err = Render(store.Page{Content: `<h2>Set up &amp; go!</h2><h3 id="given">Given</h3>`})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Headings) != 2 || b.Headings[0].ID != "set-up-go" || b.Headings[1].ID != "given" {
		t.Errorf("html headings: got %+v", b.Headings)
	}
}

func TestRenderLeavesThePageAlone(t *testing.T) {
	p := store.Page{MarkdownEnabled: true, Content: "<script>x</script>", MarkdownContent: "<img src=x onerror=alert(1)>"}
	before := p
	if _, err := Render(p); err != nil {
		t.Fatal(err)
	}
	if p.Content != before.Content || p.MarkdownContent != before.MarkdownContent {
		t.Errorf("the page changed: %+v", p)
	}
}

// TestSanitiserCorpus renders every stored-XSS payload as HTML and as
// Markdown and checks the output holds nothing a browser would run.
func TestSanitiserCorpus(t *testing.T) {
	for i, payload := range xsstest.Payloads {
		for _, md := range []bool{false, true} {
			b, err := renderText(payload, md)
			if err != nil {
				t.Fatalf("payload %d: %v", i, err)
			}
			if problem := executable(string(b.HTML)); problem != "" {
				t.Errorf("payload %d (markdown %v) %q\nrenders %q\n%s", i, md, payload, b.HTML, problem)
			}
		}
	}
}

// forbidden are elements that run code, load active content, submit,
// restyle or rebase the page.
var forbidden = map[string]bool{
	"script": true, "iframe": true, "frame": true, "frameset": true, "object": true, "embed": true, "applet": true,
	"form": true, "input": true, "button": true, "textarea": true, "select": true, "style": true, "link": true,
	"base": true, "meta": true, "svg": true, "math": true, "template": true, "noscript": true, "xml": true,
	"import": true, "portal": true, "audio": true, "video": true, "source": true, "track": true, "param": true,
}

// urlAttrs are attributes whose value a browser may follow or load.
var urlAttrs = map[string]bool{
	"href": true, "src": true, "action": true, "formaction": true, "background": true, "poster": true,
	"srcset": true, "data": true, "cite": true, "longdesc": true, "lowsrc": true, "dynsrc": true, "xlink:href": true,
	"codebase": true, "usemap": true, "ping": true, "manifest": true,
}

// executable parses out as a browser would and describes the first
// executable construct it finds, or returns "".
func executable(out string) string {
	nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return "unparseable: " + err.Error()
	}
	var problem string
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if problem != "" {
			return
		}
		if n.Type == html.ElementNode {
			if forbidden[strings.ToLower(n.Data)] || n.Namespace != "" {
				problem = "element <" + n.Data + ">"
				return
			}
			for _, a := range n.Attr {
				key := strings.ToLower(a.Key)
				if a.Namespace != "" {
					key = a.Namespace + ":" + key
				}
				switch {
				case strings.HasPrefix(key, "on"):
					problem = "event handler " + key
				case key == "style":
					problem = "style attribute"
				case urlAttrs[key] && dangerousURL(a.Val):
					problem = "URL " + key + "=" + a.Val
				}
				if problem != "" {
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	for _, n := range nodes {
		visit(n)
	}
	return problem
}

// dangerousURL reports a URL with a scheme that runs code, as a browser
// reads it: leading controls and spaces ignored, tabs and newlines removed.
func dangerousURL(v string) bool {
	v = strings.TrimLeft(v, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	v = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, strings.ToLower(v))
	for _, scheme := range []string{"javascript:", "vbscript:", "data:text/html", "data:image/svg", "data:application", "livescript:", "mocha:"} {
		if strings.HasPrefix(v, scheme) || strings.Contains(v, ","+scheme) || strings.Contains(v, " "+scheme) {
			return true
		}
	}
	return false
}

func TestExecutableCatchesWhatItShould(t *testing.T) {
	// The checker itself must fail on the constructs it looks for.
	for _, bad := range []string{
		"<script>x</script>", `<img src=x onerror=x>`, `<a href=" JaVa&#x09;script:x">a</a>`, `<iframe></iframe>`,
		`<a href="data:text/html;base64,PHNjcmlwdD4=">a</a>`, `<svg><a xlink:href="javascript:x">a</a></svg>`,
		`<p style="x">a</p>`, `<form></form>`, `<base href="//evil">`, `<meta http-equiv=refresh>`,
	} {
		if executable(bad) == "" {
			t.Errorf("checker missed %q", bad)
		}
	}
	if p := executable(`<p><a href="https://x" rel="nofollow">ok</a> <code class="x">c</code></p>`); p != "" {
		t.Errorf("checker flags safe HTML: %s", p)
	}
}

// FuzzRenderIsSafe: whatever a page holds, as HTML or Markdown, the
// rendered body holds nothing executable.
func FuzzRenderIsSafe(f *testing.F) {
	for _, p := range xsstest.Payloads {
		f.Add(p, false)
		f.Add(p, true)
	}
	f.Fuzz(func(t *testing.T, text string, md bool) {
		b, err := renderText(text, md)
		if err != nil {
			return
		}
		if problem := executable(string(b.HTML)); problem != "" {
			t.Fatalf("%q (markdown %v) renders %q: %s", text, md, b.HTML, problem)
		}
	})
}
