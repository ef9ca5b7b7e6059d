package config

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// EnvOnly lists the settings read from the environment alone (secrets, which
// must not appear on a command line, and the standard variables of the
// libraries the services use). --help prints them after the flags, whose
// variables it finds in their usage text ("(env NAME)"): a setting added in
// either place appears in --help without another list to keep.
var EnvOnly = []struct{ Name, Usage string }{
	{"ETCD_USERNAME", "etcd user, with --store etcd (environment only: no secrets in process listings)"},
	{"ETCD_PASSWORD", "etcd password, with ETCD_USERNAME"},
	{"ETCD_PASSWORD_FILE", "file holding the etcd password, instead of ETCD_PASSWORD"},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTLP endpoint: when set (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), traces are exported there"},
	{"OTEL_*", "the other standard OpenTelemetry variables (OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_HEADERS, OTEL_TRACES_SAMPLER, OTEL_SERVICE_NAME, ...)"},
}

var envInUsage = regexp.MustCompile(`\benv ([A-Z][A-Z0-9_]+)`)

// usage writes --help: every flag with its type and default, then every
// environment variable and the flag it stands for. A default that holds a
// secret (a flag whose name says token, secret or password, given through
// the environment) is not shown.
func usage(out io.Writer, name string, fs *flag.FlagSet) {
	fmt.Fprintf(out, "Usage: %s [flags]\n\nFlags (a flag given wins over its environment variable):\n", name)
	type env struct{ name, flag string }
	var envs []env
	fs.VisitAll(func(f *flag.Flag) {
		kind, text := flag.UnquoteUsage(f)
		fmt.Fprintf(out, "  --%s\n", strings.TrimSpace(f.Name+" "+kind))
		fmt.Fprintf(out, "        %s\n        default: %s\n", text, shownDefault(f))
		for i, m := range envInUsage.FindAllStringSubmatch(f.Usage, -1) {
			how := "as --" + f.Name
			if i > 0 { // a further variable in the usage: read with the flag
				how = "with --" + f.Name + " (see it)"
			}
			envs = append(envs, env{m[1], how})
		}
	})
	fmt.Fprintf(out, "\nEnvironment:\n")
	for _, e := range envs {
		fmt.Fprintf(out, "  %-36s %s\n", e.name, e.flag)
	}
	for _, e := range EnvOnly {
		fmt.Fprintf(out, "  %-36s %s\n", e.Name, e.Usage)
	}
}

func shownDefault(f *flag.Flag) string {
	secret := strings.Contains(f.Name, "token") || strings.Contains(f.Name, "secret") || strings.Contains(f.Name, "password")
	switch {
	case f.DefValue == "":
		return "none"
	case secret && !strings.HasSuffix(f.Name, "-file"):
		return "set from the environment (not shown)"
	}
	return f.DefValue
}
