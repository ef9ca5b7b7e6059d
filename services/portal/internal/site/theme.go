package site

import (
	"embed"
	"html/template"
	"time"
)

// The default theme: html/template pages and one stylesheet, embedded in
// the binary. No JavaScript: every page reads fully without it.
var (
	//go:embed theme/*.html
	themeFiles embed.FS
	//go:embed theme/site.css
	themeCSS string

	templates = template.Must(template.New("").Funcs(template.FuncMap{
		"date": func(t time.Time) string { return t.UTC().Format("2 January 2006") },
		"iso":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	}).ParseFS(themeFiles, "theme/*.html"))
)
