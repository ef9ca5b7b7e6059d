package ui

import "html/template"

// pageNames are the templates under templates/, each rendered inside
// layout.html.
var pageNames = []string{"error", "login", "apis", "api", "migrate", "report", "policies", "policy", "keys", "gateways", "audit", "users"}

func parsePages() map[string]*template.Template {
	out := make(map[string]*template.Template, len(pageNames))
	for _, n := range pageNames {
		out[n] = template.Must(template.ParseFS(templateFS, "templates/layout.html", "templates/"+n+".html"))
	}
	return out
}
