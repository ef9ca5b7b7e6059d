// Package config reads a service's settings from flags, with environment
// variables as the fallback: a flag given on the command line always wins.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// Config holds the settings every Gatehouse service takes (CONTRACT §0).
type Config struct {
	HTTPAddr       string // REST facade listen address
	GRPCAddr       string // gRPC listen address
	DBPath         string // bbolt store file; its parent folder is created
	BootstrapToken string // admin secret to ensure at start; empty: generate one if the store has no admin
}

// Defaults are a service's built-in values, used when neither a flag nor the
// environment sets a value.
type Defaults struct {
	HTTPAddr, GRPCAddr, DBPath string
}

// ErrHelp is returned when -h or --help was asked for; the usage was printed.
var ErrHelp = flag.ErrHelp

// Parse reads args (without the program name). getenv supplies the fallbacks
// HTTP_ADDR, GRPC_ADDR, DB_PATH and BOOTSTRAP_TOKEN. Usage and flag errors go
// to out.
func Parse(name string, args []string, getenv func(string) string, d Defaults, out io.Writer) (Config, error) {
	fallback := func(env, def string) string {
		if v := getenv(env); v != "" {
			return v
		}
		return def
	}
	var c Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.HTTPAddr, "http-addr", fallback("HTTP_ADDR", d.HTTPAddr), "REST listen address (env HTTP_ADDR)")
	fs.StringVar(&c.GRPCAddr, "grpc-addr", fallback("GRPC_ADDR", d.GRPCAddr), "gRPC listen address (env GRPC_ADDR)")
	fs.StringVar(&c.DBPath, "db", fallback("DB_PATH", d.DBPath), "bbolt store file (env DB_PATH)")
	fs.StringVar(&c.BootstrapToken, "bootstrap-token", getenv("BOOTSTRAP_TOKEN"), "admin secret ensured at start (env BOOTSTRAP_TOKEN)")
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%s: unexpected argument %q", name, fs.Arg(0))
	}
	switch {
	case c.HTTPAddr == "":
		return Config{}, errors.New("--http-addr must not be empty")
	case c.GRPCAddr == "":
		return Config{}, errors.New("--grpc-addr must not be empty")
	case c.DBPath == "":
		return Config{}, errors.New("--db must not be empty")
	}
	return c, nil
}
