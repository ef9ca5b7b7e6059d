package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
)

// Secrets (the bootstrap token, etcd password, a node secret) are given by
// file or by environment, so that no command line shows them (CONTRACT §0,
// "Listeners and secrets"): every secret setting --NAME (env ENV) has a twin
// --NAME-file (env ENV_FILE) naming a file that holds it. The inline flag is
// still accepted, and RedactArgs takes its value out of os.Args so that
// /debug/pprof/cmdline and expvar's cmdline do not show it.

// Secret is one secret setting registered by AddSecret; Value reads it once
// the flags are parsed.
type Secret struct {
	fs           *flag.FlagSet
	getenv       func(string) string
	name, env    string
	inline, file string
}

// AddSecret registers --name (env env) and --name-file (env env_FILE) on fs.
// Flags win over the environment; giving the secret and its file at the same
// level (both flags, or both variables) is an error.
func AddSecret(fs *flag.FlagSet, getenv func(string) string, name, env, usage string) *Secret {
	s := &Secret{fs: fs, getenv: getenv, name: name, env: env}
	fs.StringVar(&s.inline, name, "", usage+" (env "+env+"; prefer --"+name+"-file: a command line is visible to every local user)")
	fs.StringVar(&s.file, name+"-file", "", "file holding the "+usage+", trailing newline stripped (env "+env+"_FILE)")
	secretFlags.Lock()
	secretFlags.names[name] = true
	secretFlags.Unlock()
	return s
}

// Value returns the secret: from the flags if either was given, else from the
// environment; "" when none was.
func (s *Secret) Value() (string, error) {
	var inline, file bool
	s.fs.Visit(func(f *flag.Flag) {
		inline = inline || f.Name == s.name
		file = file || f.Name == s.name+"-file"
	})
	switch {
	case inline && file:
		return "", fmt.Errorf("--%s and --%s-file: give one of them", s.name, s.name)
	case file:
		return ReadSecretFile(s.file)
	case inline:
		return s.inline, nil
	}
	return EnvSecret(s.getenv, s.env)()
}

// EnvSecret reads a secret given only in the environment: the variable env
// itself, or the file its twin env_FILE names. The secret is read when the
// returned function is called.
func EnvSecret(getenv func(string) string, env string) func() (string, error) {
	return func() (string, error) {
		v, path := getenv(env), getenv(env+"_FILE")
		switch {
		case v != "" && path != "":
			return "", fmt.Errorf("%s and %s_FILE are both set: give one of them", env, env)
		case path != "":
			return ReadSecretFile(path)
		}
		return v, nil
	}
}

// ReadSecretFile reads a secret from the file at path, without its trailing
// newline (\n or \r\n). An empty file is an error: a secret is never "".
// The error names the file, never its content.
func ReadSecretFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret file: %w", err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", errors.New("secret file " + path + " holds more than one line")
	}
	return s, nil
}

// secretFlags names the flags AddSecret registered, for RedactArgs.
var secretFlags = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// Redacted replaces a secret's value in RedactArgs' answer.
const Redacted = "[REDACTED]"

// RedactArgs returns args with the value of every secret flag (as
// registered by AddSecret: -name v, --name v, --name=v) replaced by
// Redacted. A service's main assigns it to os.Args after parsing, so that
// nothing in the process serves the secret back (pprof's cmdline, expvar).
func RedactArgs(args []string) []string {
	secretFlags.Lock()
	defer secretFlags.Unlock()
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || !secretFlags.names[name] {
			continue
		}
		if hasValue {
			out[i] = a[:len(a)-len(strings.TrimLeft(a, "-"))] + name + "=" + Redacted
		} else if i+1 < len(out) {
			out[i+1] = Redacted
			i++
		}
	}
	return out
}
