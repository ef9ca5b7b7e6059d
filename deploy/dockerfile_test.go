package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// dockerStage is one FROM section of a Dockerfile.
type dockerStage struct {
	name, from string // from: the resolved base image or stage name
	instr      [][2]string
}

// parseDockerfile reads the instructions (continuations joined, comments
// dropped) and resolves ${VAR} in FROM lines from the global ARG defaults.
func parseDockerfile(text string) ([]*dockerStage, error) {
	args := map[string]string{}
	var stages []*dockerStage
	var logical []string
	var cur strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if body, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(trimmed)
		logical = append(logical, cur.String())
		cur.Reset()
	}
	expand := func(s string) string {
		return os.Expand(s, func(k string) string { return args[k] })
	}
	for _, l := range logical {
		op, rest, _ := strings.Cut(l, " ")
		op = strings.ToUpper(op)
		rest = strings.TrimSpace(rest)
		switch {
		case op == "ARG" && len(stages) == 0:
			k, v, _ := strings.Cut(rest, "=")
			args[k] = v
		case op == "FROM":
			f := strings.Fields(rest)
			f = slices.DeleteFunc(f, func(s string) bool { return strings.HasPrefix(s, "--") })
			st := &dockerStage{from: expand(f[0])}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
		case len(stages) == 0:
			return nil, fmt.Errorf("%s before the first FROM", op)
		default:
			st := stages[len(stages)-1]
			st.instr = append(st.instr, [2]string{op, rest})
		}
	}
	return stages, nil
}

// shellWords splits a RUN command the way sh would for plain words and
// double-quoted strings (enough for our Dockerfile).
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

var (
	wantBuilderImage = regexp.MustCompile(`^golang:1\.26(\.\d+)?(-[a-z0-9]+)?$`)
	wantRuntimeImage = "gcr.io/distroless/static-debian12:nonroot"
)

// dockerfileProblems checks deploy/Dockerfile against the rules and against
// the manifests: for each service a target of that name on distroless/static
// running as the pod's numeric user, the binary built with CGO_ENABLED=0 and
// buildFlags on golang:1.26, exposing the ports and store folder the
// StatefulSet uses.
func dockerfileProblems(text string, pods map[string]*appsv1.StatefulSet) []string {
	stages, err := parseDockerfile(text)
	if err != nil {
		return []string{err.Error()}
	}
	byName := map[string]*dockerStage{}
	for _, s := range stages {
		if s.name != "" {
			byName[s.name] = s
		}
	}
	// chain walks FROM links back to an image, collecting the stages passed.
	chain := func(s *dockerStage) []*dockerStage {
		out := []*dockerStage{s}
		for base, ok := byName[s.from]; ok && len(out) < 10; base, ok = byName[base.from] {
			out = append(out, base)
		}
		return out
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	for _, svc := range services {
		st, ok := byName[svc]
		if !ok {
			bad("no target %q", svc)
			continue
		}
		if st.from != wantRuntimeImage {
			bad("%s: runtime image %q, want %q", svc, st.from, wantRuntimeImage)
		}
		sts := pods[svc]
		pod := sts.Spec.Template.Spec
		c := pod.Containers[0]
		var user, entry, binFrom string
		var exposed []int32
		env := map[string]string{}
		for _, in := range st.instr {
			switch in[0] {
			case "USER":
				user = in[1]
			case "ENTRYPOINT":
				entry = in[1]
			case "EXPOSE":
				for _, p := range strings.Fields(in[1]) {
					n, _ := strconv.Atoi(strings.TrimSuffix(p, "/tcp"))
					exposed = append(exposed, int32(n))
				}
			case "ENV":
				for _, kv := range strings.Fields(in[1]) {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
			case "COPY":
				f := strings.Fields(in[1])
				if len(f) >= 3 && f[len(f)-1] == "/usr/local/bin/"+svc {
					for _, opt := range f {
						if from, ok := strings.CutPrefix(opt, "--from="); ok {
							binFrom = from
						}
					}
				}
			}
		}
		wantUser := fmt.Sprintf("%d:%d", *pod.SecurityContext.RunAsUser, *pod.SecurityContext.RunAsGroup)
		if user != wantUser {
			bad("%s: USER %q, want the pod's numeric %q (runAsNonRoot can only verify a numeric user)", svc, user, wantUser)
		}
		var argv []string
		if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) == 0 || argv[0] != "/usr/local/bin/"+svc {
			bad("%s: ENTRYPOINT %s, want the exec form [\"/usr/local/bin/%s\"] (no shell in distroless)", svc, entry, svc)
		}
		var ports []int32
		for _, p := range c.Ports {
			ports = append(ports, p.ContainerPort)
		}
		if !slices.Equal(slices.Sorted(slices.Values(exposed)), slices.Sorted(slices.Values(ports))) {
			bad("%s: EXPOSE %v, the StatefulSet declares %v", svc, exposed, ports)
		}
		if db := env["DB_PATH"]; path.Dir(db) != path.Clean(c.VolumeMounts[0].MountPath) {
			bad("%s: ENV DB_PATH %q is not in the volume folder %s", svc, db, c.VolumeMounts[0].MountPath)
		}

		build, ok := byName[binFrom]
		if !ok {
			bad("%s: the binary is not copied from a build stage to /usr/local/bin/%s", svc, svc)
			continue
		}
		var built bool
		for _, in := range build.instr {
			words := shellWords(in[1])
			i := slices.Index(words, "go")
			if in[0] != "RUN" || i < 0 || i+1 >= len(words) || words[i+1] != "build" {
				continue
			}
			built = true
			goArgs := words[i+2:]
			for _, f := range buildFlags {
				// The Dockerfile's -ldflags add the build stamps after ours.
				if !slices.ContainsFunc(goArgs, func(a string) bool {
					return a == f || strings.HasPrefix(f, "-ldflags=") && strings.HasPrefix(a, f+" ")
				}) {
					bad("%s: go build lacks %q (binaries_test.go builds with %v)", svc, f, buildFlags)
				}
			}
			if !slices.ContainsFunc(goArgs, func(a string) bool {
				return strings.Contains(a, "-X ${BUILDINFO}.version=${VERSION}") && strings.Contains(a, "-X ${BUILDINFO}.revision=${REVISION}")
			}) {
				bad("%s: go build does not stamp the version and revision (-X ${BUILDINFO}.version=${VERSION} -X ${BUILDINFO}.revision=${REVISION})", svc)
			}
			if !slices.Contains(goArgs, "./services/"+svc+"/cmd/"+svc) {
				bad("%s: go build does not build ./services/%s/cmd/%s", svc, svc, svc)
			}
		}
		if !built {
			bad("%s: stage %s runs no go build", svc, binFrom)
		}
		cgoOff, image := false, ""
		for _, s := range chain(build) {
			for _, in := range s.instr {
				if in[0] == "ENV" && slices.Contains(strings.Fields(in[1]), "CGO_ENABLED=0") {
					cgoOff = true
				}
			}
			image = s.from
		}
		if !cgoOff {
			bad("%s: the build stage does not set ENV CGO_ENABLED=0", svc)
		}
		if !wantBuilderImage.MatchString(image) {
			bad("%s: builder image %q, want golang:1.26", svc, image)
		}
	}
	return problems
}

func basePods(t *testing.T) map[string]*appsv1.StatefulSet {
	t.Helper()
	rs, err := render("base")
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]*appsv1.StatefulSet{}
	for _, r := range rs {
		if s, ok := r.obj.(*appsv1.StatefulSet); ok {
			pods[s.Name] = s
		}
	}
	return pods
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	pods := basePods(t)
	for _, p := range dockerfileProblems(string(b), pods) {
		t.Error(p)
	}

	// Each mutation breaks one rule; the check must notice.
	for _, m := range []struct{ name, old, new string }{
		{"cgo on", "CGO_ENABLED=0", "CGO_ENABLED=1"},
		{"root user", "USER 65532:65532", "USER root"},
		{"named user", "USER 65532:65532", "USER nonroot"},
		{"fat runtime image", "RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot", "RUNTIME_IMAGE=debian:12"},
		{"no trimpath", "go build -trimpath", "go build"},
		{"other builder", "GO_IMAGE=golang:1.26", "GO_IMAGE=golang:1.24"},
		{"shell entrypoint", `ENTRYPOINT ["/usr/local/bin/studio"]`, "ENTRYPOINT /usr/local/bin/studio"},
		{"wrong port", "EXPOSE 3000 9000", "EXPOSE 3000 9090"},
		{"store off the volume", "DB_PATH=/var/lib/gatehouse/portal.db", "DB_PATH=/data/portal.db"},
		{"missing target", "AS management\n", "AS mgmt\n"},
		{"wrong package", "./services/portal/cmd/portal", "./services/portal/cmd/portal-debug"},
	} {
		t.Run(m.name, func(t *testing.T) {
			if !strings.Contains(string(b), m.old) {
				t.Fatalf("the Dockerfile no longer contains %q: update this case", m.old)
			}
			if got := dockerfileProblems(strings.ReplaceAll(string(b), m.old, m.new), pods); len(got) == 0 {
				t.Errorf("replacing %q by %q went unnoticed", m.old, m.new)
			} else {
				t.Log(got)
			}
		})
	}
}
