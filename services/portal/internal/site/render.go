package site

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/alecthomas/chroma/v2/styles"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	highlighting "github.com/yuin/goldmark-highlighting/v2"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse/gatehouse/services/portal/internal/store"
)

// Body is a page's content made safe to show: sanitised HTML and the
// headings it holds, for a table of contents.
type Body struct {
	HTML     template.HTML
	Headings []Heading
}

// Heading is one entry of a table of contents.
type Heading struct {
	Level int // 2 or 3; a body's own h1s count as 2
	ID    string
	Text  string
}

// Source tells which stored text a page shows and how it is read: when
// MarkdownEnabled, MarkdownContent if it is not empty, else Content, as
// Markdown; otherwise Content as HTML.
func Source(p store.Page) (text string, markdown bool) {
	if !p.MarkdownEnabled {
		return p.Content, false
	}
	if p.MarkdownContent != "" {
		return p.MarkdownContent, true
	}
	return p.Content, true
}

// markdown is CommonMark with GitHub tables, strikethrough and autolinks,
// code blocks highlighted with CSS classes (so no inline style attribute is
// needed), and heading IDs. Raw HTML passes through: the sanitiser, not the
// Markdown renderer, decides what is safe, for Markdown and HTML alike.
var markdown = goldmark.New(
	goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify,
		highlighting.NewHighlighting(
			highlighting.WithStyle(lightStyle),
			highlighting.WithFormatOptions(chromahtml.WithClasses(true)),
		)),
	goldmark.WithParserOptions(parser.WithAutoHeadingID()),
	goldmark.WithRendererOptions(gmhtml.WithUnsafe()),
)

// Code colours: chroma's GitHub styles, light and dark.
const (
	lightStyle = "github"
	darkStyle  = "github-dark"
)

// sanitiser is bluemonday's policy for user-generated content: no script,
// no event handler, no style, no frame, object or form, only http, https and
// mailto URLs (and relative ones), rel="nofollow" on every link. It also
// keeps the class names of highlighted code.
var sanitiser = func() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^[a-zA-Z0-9_ -]{1,200}$`)).OnElements("span", "pre", "code", "div")
	return p
}()

// Render turns a stored page into a safe Body; the stored page is not changed.
func Render(p store.Page) (Body, error) {
	text, md := Source(p)
	return renderText(text, md)
}

// ErrUnrenderable is the error of content the site cannot show, such as
// HTML nested deeper than the HTML parser's limit of 512 open elements.
var ErrUnrenderable = errors.New("content cannot be rendered")

// Renderable reports whether text (Markdown when markdown is set, else
// HTML) renders; the API checks every page and product content with it at
// write time (CONTRACT §3), so that no published page fails to render. The
// error wraps ErrUnrenderable and says why in words for the writer.
func Renderable(text string, markdown bool) error {
	_, err := renderText(text, markdown)
	return err
}

// MaxHTML bounds the HTML of one page (or a product's content) on the
// site: content whose HTML would be larger is refused at write time (422
// naming the field), so that what a reader's GET sends, and what the store
// keeps beside the page, stays small. The Markdown converter's output
// counts before sanitising too: it stops there.
const MaxHTML = 4 << 20

// RenderVersion names the renderer's output: raise it when a change to the
// renderer (sanitiser policy, Markdown extensions, theme hooks) changes the
// HTML of stored content, and every kept rendering is made again at start
// (RenderStored).
const RenderVersion = 1

func renderText(text string, md bool) (Body, error) {
	raw := []byte(text)
	if md {
		buf := &capped{max: MaxHTML}
		if err := markdown.Convert(raw, buf); err != nil {
			if errors.Is(err, errTooLarge) {
				return Body{}, tooLarge()
			}
			return Body{}, fmt.Errorf("%w: its Markdown does not convert (%v)", ErrUnrenderable, err)
		}
		raw = buf.Bytes()
	}
	clean := sanitiser.SanitizeBytes(raw)
	if len(clean) > MaxHTML {
		return Body{}, tooLarge()
	}
	return finish(clean)
}

var errTooLarge = errors.New("too large")

func tooLarge() error {
	return fmt.Errorf("%w: its HTML would be over %d bytes (4 MiB), the most a page may show", ErrUnrenderable, MaxHTML)
}

// capped is a buffer that refuses to grow past max bytes.
type capped struct {
	bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if c.Len()+len(p) > c.max {
		return 0, errTooLarge
	}
	return c.Buffer.Write(p)
}

func (c *capped) WriteString(s string) (int, error) {
	if c.Len()+len(s) > c.max {
		return 0, errTooLarge
	}
	return c.Buffer.WriteString(s)
}

func (c *capped) WriteByte(b byte) error {
	if c.Len()+1 > c.max {
		return errTooLarge
	}
	return c.Buffer.WriteByte(b)
}

func (c *capped) WriteRune(r rune) (int, error) {
	if c.Len()+4 > c.max {
		return 0, errTooLarge
	}
	return c.Buffer.WriteRune(r)
}

// Stored is b as the store keeps it beside its page.
func Stored(b Body) *store.Rendered {
	r := &store.Rendered{Version: RenderVersion, HTML: string(b.HTML)}
	for _, h := range b.Headings {
		r.Headings = append(r.Headings, store.RenderedHeading{Level: h.Level, ID: h.ID, Text: h.Text})
	}
	return r
}

// shown is the Body a kept rendering holds.
func shown(r *store.Rendered) Body {
	b := Body{HTML: template.HTML(r.HTML)}
	for _, h := range r.Headings {
		b.Headings = append(b.Headings, Heading{Level: h.Level, ID: h.ID, Text: h.Text})
	}
	return b
}

// finish reads sanitised HTML and adds what the theme needs: an ID on every
// h1–h3 that lacks one, "noopener" on links; it collects the headings. It
// only adds attributes with values made here, to HTML that is already safe.
func finish(clean []byte) (Body, error) {
	body := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(bytes.NewReader(clean), body)
	if err != nil {
		return Body{}, fmt.Errorf("%w: its HTML nests elements too deeply or is malformed (%v)", ErrUnrenderable, err)
	}
	var b Body
	used := map[string]bool{}
	for _, n := range nodes {
		walk(n, func(n *html.Node) {
			if n.Type != html.ElementNode {
				return
			}
			switch n.DataAtom {
			case atom.A:
				addRel(n)
			case atom.H1, atom.H2, atom.H3:
				id := attr(n, "id")
				if id == "" || used[id] {
					id = unique(used, slug(textOf(n)))
					setAttr(n, "id", id)
				}
				used[id] = true
				level := max(int(n.Data[1]-'0'), 2)
				b.Headings = append(b.Headings, Heading{Level: level, ID: id, Text: strings.Join(strings.Fields(textOf(n)), " ")})
			}
		})
	}
	var out bytes.Buffer
	for _, n := range nodes {
		if err := html.Render(&out, n); err != nil {
			return Body{}, err
		}
	}
	b.HTML = template.HTML(out.String()) // sanitised above
	return b, nil
}

func walk(n *html.Node, fn func(*html.Node)) {
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val
		}
	}
	return ""
}

func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}

// addRel makes every link rel="nofollow noopener" at least.
func addRel(n *html.Node) {
	if attr(n, "href") == "" {
		return
	}
	rel := strings.Fields(attr(n, "rel"))
	for _, want := range []string{"nofollow", "noopener"} {
		if !contains(rel, want) {
			rel = append(rel, want)
		}
	}
	setAttr(n, "rel", strings.Join(rel, " "))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func textOf(n *html.Node) string {
	var sb strings.Builder
	walk(n, func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
	})
	return sb.String()
}

// slug is an ID made of a heading's letters and digits: "Get started!" → "get-started".
func slug(s string) string {
	var sb strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			if dash && sb.Len() > 0 {
				sb.WriteByte('-')
			}
			dash = false
			sb.WriteRune(r)
		default:
			dash = true
		}
		if sb.Len() >= 64 {
			break
		}
	}
	if sb.Len() == 0 {
		return "section"
	}
	return sb.String()
}

func unique(used map[string]bool, id string) string {
	if !used[id] {
		return id
	}
	for i := 1; ; i++ {
		if c := id + "-" + strconv.Itoa(i); !used[c] {
			return c
		}
	}
}

// codeCSS is the stylesheet of highlighted code: light colours, or dark
// ones when the reader prefers a dark scheme. Each set applies alone, so a
// class that only the light style colours never shows its light colour on
// a dark background.
func codeCSS() (string, error) {
	f := chromahtml.New(chromahtml.WithClasses(true))
	var buf bytes.Buffer
	for _, scheme := range []struct{ media, style string }{
		{"not all and (prefers-color-scheme: dark)", lightStyle},
		{"(prefers-color-scheme: dark)", darkStyle},
	} {
		fmt.Fprintf(&buf, "@media %s {\n", scheme.media)
		if err := f.WriteCSS(&buf, styles.Get(scheme.style)); err != nil {
			return "", err
		}
		buf.WriteString("}\n")
	}
	return buf.String(), nil
}
