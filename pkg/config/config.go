// Package config reads a service's settings from flags, with environment
// variables as the fallback: a flag given on the command line always wins.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// intFlag is a flag holding a number ≥ 0.
type intFlag struct{ p *int }

func (f intFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.Itoa(*f.p)
}

func (f intFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("want a number ≥ 0")
	}
	*f.p = n
	return nil
}

// Config holds the settings every Gatehouse service takes (CONTRACT §0).
type Config struct {
	HTTPAddr       string // REST facade listen address
	GRPCAddr       string // gRPC listen address
	DBPath         string // bbolt store file; its parent folder is created
	BootstrapToken string // admin secret to ensure at start; empty: generate one if the store has no admin
	Store          string // StoreBbolt or StoreEtcd (CONTRACT §4)
	Etcd           Etcd   // the etcd cluster, with --store etcd
	Limits         Limits // what clients may hold of the service
	DebugAddr      string // pprof and expvar listen address; empty: off
	// DebugAddrPublic allows a DebugAddr that is not a loopback address
	// (--debug-addr-public): the debug listener has no authentication.
	DebugAddrPublic bool
	// MetricsAddr, when set, serves /metrics on a listener of its own and
	// not on the HTTP port (--metrics-addr, METRICS_ADDR).
	MetricsAddr string
	// SiteAddr is the portal's public site listener (--site-addr,
	// SITE_ADDR); empty for a service without one (Defaults.SiteAddr unset).
	SiteAddr string
	// SiteAddrDefault reports that SiteAddr is the built-in default, given
	// neither as a flag nor in the environment: when another process holds
	// it (a second replica on one machine), a free port is used instead.
	SiteAddrDefault bool
	Audit           Audit // what the audit log keeps
	Log             Log   // level and format of the process's log
	// ShutdownDelay is how long the service keeps serving after SIGTERM,
	// with /readyz and gRPC health already NOT_SERVING, so that load
	// balancers stop sending before the listeners close (--shutdown-delay).
	ShutdownDelay time.Duration
	// Gateways: how Tyk Gateways run from the service (management only,
	// Defaults.Gateways; CONTRACT §6).
	Gateways Gateways
	// Consumers: the portal's consumer side (portal only, Defaults.Consumers).
	Consumers Consumers
	// PortalUserKey is the key the portal calls management with (management
	// only, Defaults.Gateways; --portal-user-key-file, PORTAL_USER_KEY or
	// PORTAL_USER_KEY_FILE): management makes sure a user of its own holds it,
	// allowed keys: write and policy: read. Empty: none is made.
	PortalUserKey string
	// TLS, when its files are set, serves every listener over TLS.
	TLS TLS
}

// TLS are the files of the service's certificate (CONTRACT §0): with
// CertFile and KeyFile the HTTP, site and metrics listeners serve HTTPS and
// gRPC serves TLS; with ClientCAFile too, gRPC clients must present a
// certificate signed by a CA in it. pkg/tlsconfig reads them, and again
// when they change.
type TLS struct {
	CertFile     string // --tls-cert-file, TLS_CERT_FILE
	KeyFile      string // --tls-key-file, TLS_KEY_FILE
	ClientCAFile string // --grpc-client-ca-file, GRPC_CLIENT_CA_FILE
}

// On reports whether the listeners serve TLS.
func (t TLS) On() bool { return t.CertFile != "" }

// Gateways are management's settings for Tyk Gateways in dashboard mode.
type Gateways struct {
	// NodeSecret is the gateways' node_secret (--node-secret or
	// --node-secret-file, NODE_SECRET or NODE_SECRET_FILE); empty: the
	// gateway routes answer 404.
	NodeSecret string
	// Redis is the redis:// or rediss:// URL reload notifications go to
	// (--gateway-redis, GATEWAY_REDIS); empty: none are sent.
	Redis string
	// RedisPassword is from the environment only (GATEWAY_REDIS_PASSWORD or
	// the file GATEWAY_REDIS_PASSWORD_FILE names).
	RedisPassword string
	// APIURL is the gateways' own API (their /tyk/ routes), through which
	// management issues keys (--gateway-api-url, GATEWAY_API_URL); empty:
	// the key routes answer 503.
	APIURL string
	// APISecret is the gateways' `secret` for that API
	// (--gateway-api-secret-file or GATEWAY_API_SECRET_FILE).
	APISecret string
}

// Log is how the process logs (--log-level, --log-format).
type Log struct {
	Level  slog.Level // debug, info, warn or error
	Format string     // LogText or LogJSON
}

// The formats --log-format names.
const (
	LogText = "text"
	LogJSON = "json"
)

// Audit bounds the audit log (CONTRACT §2): entries older than Retention,
// and the oldest beyond MaxEntries, are deleted. Zero fields take the
// defaults (pkg/audit applies them).
type Audit struct {
	Retention  time.Duration // --audit-retention, AUDIT_RETENTION (default 90 days)
	MaxEntries int           // --audit-max-entries, AUDIT_MAX_ENTRIES (default 1,000,000)
}

// The defaults of Audit.
const (
	DefaultAuditRetention  = 90 * 24 * time.Hour
	DefaultAuditMaxEntries = 1_000_000
)

// The storage engines --store names.
const (
	StoreBbolt = "bbolt"
	StoreEtcd  = "etcd"
)

// Etcd is how a service reaches its etcd cluster (CONTRACT §4).
type Etcd struct {
	Endpoints          []string // host:port or http(s)://host:port
	Prefix             string   // every key of the service lives under it
	CACert, Cert, Key  string   // TLS files; empty: plain TCP unless the endpoints say https
	Username, Password string   // from the environment only
	// MaxRequestBytes mirrors the cluster's --max-request-bytes (0: etcd's
	// default, 1.5 MiB): writes above it are refused with 413 before they are
	// sent (--etcd-max-request-bytes, ETCD_MAX_REQUEST_BYTES).
	MaxRequestBytes int
}

// Limits bound what clients can hold of a service. Zero fields take the
// defaults of pkg/server and pkg/restfacade; only the Max fields are flags, the
// timeouts and the gRPC fields are for tests.
type Limits struct {
	MaxConns    int // open HTTP connections, and gRPC connections apart; one more is answered 503 (gRPC: closed) (--max-conns, MAX_CONNS)
	MaxInFlight int // REST requests served at once; one more is answered 503 (--max-inflight, MAX_INFLIGHT)
	// MaxConnsPerIP bounds the connections of one remote address, on each
	// listener apart (--max-conns-per-ip, MAX_CONNS_PER_IP).
	MaxConnsPerIP int
	// MaxInFlightBytes is the budget of request bytes in flight, REST and
	// gRPC together (--max-inflight-bytes, MAX_INFLIGHT_BYTES).
	MaxInFlightBytes int

	ReadHeaderTimeout time.Duration // request line and headers
	IdleTimeout       time.Duration // keep-alive connection without a request
	WriteTimeout      time.Duration // from the end of the headers to the end of the answer
	BodyGrace         time.Duration // a body's read deadline: BodyGrace + length at MinBodyRate
	MinBodyRate       int           // bytes per second

	GRPCMaxStreams     int           // calls one gRPC connection has open at once
	GRPCPingMinTime    time.Duration // a gRPC client pinging more often is disconnected
	GRPCMessageTimeout time.Duration // a call whose message is not complete this long after it started is reset
}

// Defaults are a service's built-in values, used when neither a flag nor the
// environment sets a value.
type Defaults struct {
	HTTPAddr, GRPCAddr, DBPath string
	// SiteAddr, when set, gives the service a public site listener
	// (--site-addr); only the portal has one.
	SiteAddr string
	// Limits are the values of --max-conns and --max-inflight when neither
	// the flag nor the environment sets them, as --help shows them (zero:
	// the server's own defaults apply).
	Limits Limits
	// Gateways adds the Tyk Gateway settings (Config.Gateways).
	Gateways bool
	// Consumers adds the portal's consumer settings (Config.Consumers).
	Consumers bool
}

// ErrHelp is returned when -h or --help was asked for; the usage was printed.
var ErrHelp = flag.ErrHelp

// ErrVersion is returned when --version was asked for; nothing was printed.
var ErrVersion = errors.New("version asked for")

// Parse reads args (without the program name); name is the service, which
// also names the default etcd prefix. getenv supplies the fallbacks HTTP_ADDR,
// GRPC_ADDR, DB_PATH, BOOTSTRAP_TOKEN(_FILE), DEBUG_ADDR, METRICS_ADDR, SITE_ADDR,
// STORE and the ETCD_* settings. Usage and flag errors go to out.
func Parse(name string, args []string, getenv func(string) string, d Defaults, out io.Writer) (Config, error) {
	fallback := func(env, def string) string { return envOr(getenv, env, def) }
	c := Config{Limits: d.Limits}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { usage(out, name, fs) }
	fs.StringVar(&c.HTTPAddr, "http-addr", fallback("HTTP_ADDR", d.HTTPAddr), "REST listen address (env HTTP_ADDR)")
	fs.StringVar(&c.GRPCAddr, "grpc-addr", fallback("GRPC_ADDR", d.GRPCAddr), "gRPC listen address (env GRPC_ADDR)")
	fs.StringVar(&c.DBPath, "db", fallback("DB_PATH", d.DBPath), "bbolt store file (env DB_PATH)")
	token := AddSecret(fs, getenv, "bootstrap-token", "BOOTSTRAP_TOKEN", "admin secret ensured at start")
	fs.StringVar(&c.Store, "store", fallback("STORE", StoreBbolt), "storage engine: bbolt (one process, --db) or etcd (replicas on an etcd cluster) (env STORE)")
	endpoints := fs.String("etcd-endpoints", getenv("ETCD_ENDPOINTS"), "comma-separated etcd endpoints, host:port or http(s)://host:port (env ETCD_ENDPOINTS)")
	fs.StringVar(&c.Etcd.Prefix, "etcd-prefix", fallback("ETCD_PREFIX", "/gatehouse/"+name+"/"), "every etcd key of this service lives under it (env ETCD_PREFIX)")
	fs.StringVar(&c.Etcd.CACert, "etcd-cacert", getenv("ETCD_CACERT"), "CA certificate to verify etcd with (env ETCD_CACERT)")
	fs.StringVar(&c.Etcd.Cert, "etcd-cert", getenv("ETCD_CERT"), "client certificate for etcd (env ETCD_CERT)")
	fs.StringVar(&c.Etcd.Key, "etcd-key", getenv("ETCD_KEY"), "client key for etcd (env ETCD_KEY)")
	c.Etcd.Username = getenv("ETCD_USERNAME")
	etcdPassword := EnvSecret(getenv, "ETCD_PASSWORD")
	fs.Var(intFlag{&c.Etcd.MaxRequestBytes}, "etcd-max-request-bytes", "the etcd cluster's --max-request-bytes; 0: etcd's default 1.5 MiB (env ETCD_MAX_REQUEST_BYTES)")
	fs.Var(intFlag{&c.Limits.MaxConns}, "max-conns", "open HTTP connections at most, and as many gRPC connections; one more is refused (env MAX_CONNS)")
	fs.Var(intFlag{&c.Limits.MaxInFlight}, "max-inflight", "REST requests served at once at most; one more is answered 503 (env MAX_INFLIGHT)")
	fs.Var(intFlag{&c.Limits.MaxConnsPerIP}, "max-conns-per-ip", "open connections of one remote address at most, on each listener; more are refused (HTTP 503, gRPC closed) while other addresses are served (env MAX_CONNS_PER_IP)")
	fs.Var(intFlag{&c.Limits.MaxInFlightBytes}, "max-inflight-bytes", "request bytes in flight at most, REST and gRPC together; a request that does not fit waits up to 5 s, then 503 with Retry-After (gRPC Unavailable) (env MAX_INFLIGHT_BYTES)")
	if err := c.readEnvNumbers(getenv); err != nil {
		return Config{}, err
	}
	fs.DurationVar(&c.Audit.Retention, "audit-retention", c.Audit.Retention, "how long audit log entries are kept; 0: 90 days (2160h) (env AUDIT_RETENTION)")
	fs.Var(intFlag{&c.Audit.MaxEntries}, "audit-max-entries", "audit log entries kept at most, oldest dropped first; 0: 1000000 (env AUDIT_MAX_ENTRIES)")
	fs.StringVar(&c.DebugAddr, "debug-addr", getenv("DEBUG_ADDR"), "pprof and expvar listen address, apart from the API ports, loopback only unless --debug-addr-public; off when empty (env DEBUG_ADDR)")
	fs.BoolVar(&c.DebugAddrPublic, "debug-addr-public", getenv("DEBUG_ADDR_PUBLIC") == "true", "allow a --debug-addr that is not loopback: it has no authentication (env DEBUG_ADDR_PUBLIC=true)")
	fs.StringVar(&c.TLS.CertFile, "tls-cert-file", getenv("TLS_CERT_FILE"), "PEM certificate (chain) to serve HTTPS and gRPC over TLS with, read again when it changes; empty: plain text (env TLS_CERT_FILE)")
	fs.StringVar(&c.TLS.KeyFile, "tls-key-file", getenv("TLS_KEY_FILE"), "PEM private key of --tls-cert-file, read again when it changes (env TLS_KEY_FILE)")
	fs.StringVar(&c.TLS.ClientCAFile, "grpc-client-ca-file", getenv("GRPC_CLIENT_CA_FILE"), "PEM CA certificates: gRPC clients must present a certificate signed by one of them (mTLS; the API key is still checked); needs --tls-cert-file (env GRPC_CLIENT_CA_FILE)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", getenv("METRICS_ADDR"), "serve /metrics on this address and not on the HTTP port; empty: on the HTTP port (env METRICS_ADDR)")
	if d.SiteAddr != "" {
		fs.StringVar(&c.SiteAddr, "site-addr", fallback("SITE_ADDR", d.SiteAddr), "public site listen address (env SITE_ADDR)")
	}
	logLevel := fs.String("log-level", fallback("LOG_LEVEL", "info"), "log lines at this level and above: debug, info, warn or error; probes, scrapes and health checks are debug (env LOG_LEVEL)")
	fs.StringVar(&c.Log.Format, "log-format", fallback("LOG_FORMAT", LogText), "log line format: text (key=value) or json (env LOG_FORMAT)")
	shutdownDelay := fs.String("shutdown-delay", fallback("SHUTDOWN_DELAY", "0s"), "after SIGTERM, keep serving this long with /readyz and gRPC health NOT_SERVING before the listeners close (env SHUTDOWN_DELAY)")
	version := fs.Bool("version", false, "print the version, source revision and Go release, and exit")
	gateways := addGateways(fs, getenv, d.Gateways)
	consumers := addConsumers(fs, getenv, d.Consumers)
	var portalKey *Secret
	if d.Gateways {
		portalKey = AddSecret(fs, getenv, "portal-user-key", "PORTAL_USER_KEY", "key the portal calls management with; management keeps a user holding it, allowed keys: write and policy: read")
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err
	}
	if *version {
		return Config{}, ErrVersion
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := c.readLogAndShutdown(*logLevel, *shutdownDelay); err != nil {
		return Config{}, err
	}
	var err error
	if c.BootstrapToken, err = token.Value(); err != nil {
		return Config{}, err
	}
	if c.Etcd.Password, err = etcdPassword(); err != nil {
		return Config{}, err
	}
	if c.Gateways, err = gateways(); err != nil {
		return Config{}, err
	}
	if c.Consumers, err = consumers(); err != nil {
		return Config{}, err
	}
	if portalKey != nil {
		if c.PortalUserKey, err = portalKey.Value(); err != nil {
			return Config{}, err
		}
		if c.PortalUserKey != "" && len(c.PortalUserKey) < MinNodeSecret {
			return Config{}, fmt.Errorf("the portal user key is %d bytes, under %d: give a longer one", len(c.PortalUserKey), MinNodeSecret)
		}
	}
	if err := checkListeners(&c, fs, getenv); err != nil {
		return Config{}, err
	}
	for e := range strings.SplitSeq(*endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.Etcd.Endpoints = append(c.Etcd.Endpoints, e)
		}
	}
	if err := c.check(given(fs, getenv, "db", "DB_PATH")); err != nil {
		return Config{}, err
	}
	if c.Store == StoreEtcd {
		c.DBPath = ""
	}
	return c, nil
}

// readEnvNumbers reads the numeric settings' environment variables, which
// the flags then default to.
func (c *Config) readEnvNumbers(getenv func(string) string) error {
	for env, p := range map[string]*int{"MAX_CONNS": &c.Limits.MaxConns, "MAX_INFLIGHT": &c.Limits.MaxInFlight, "MAX_CONNS_PER_IP": &c.Limits.MaxConnsPerIP,
		"MAX_INFLIGHT_BYTES": &c.Limits.MaxInFlightBytes, "ETCD_MAX_REQUEST_BYTES": &c.Etcd.MaxRequestBytes, "AUDIT_MAX_ENTRIES": &c.Audit.MaxEntries} {
		if v := getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%s=%q: want a number ≥ 0", env, v)
			}
			*p = n
		}
	}
	if v := getenv("AUDIT_RETENTION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("AUDIT_RETENTION=%q: want a positive duration such as 720h", v)
		}
		c.Audit.Retention = d
	}
	return nil
}

// readLogAndShutdown reads --log-level, checks --log-format and reads
// --shutdown-delay.
func (c *Config) readLogAndShutdown(logLevel, shutdownDelay string) error {
	if err := c.Log.Level.UnmarshalText([]byte(logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", logLevel)
	}
	if c.Log.Format != LogText && c.Log.Format != LogJSON {
		return fmt.Errorf("--log-format %q: want text or json", c.Log.Format)
	}
	var err error
	if c.ShutdownDelay, err = time.ParseDuration(shutdownDelay); err != nil || c.ShutdownDelay < 0 {
		return fmt.Errorf("--shutdown-delay %q: want a duration ≥ 0 such as 5s", shutdownDelay)
	}
	return nil
}

// check refuses settings that cannot go together; dbGiven tells whether
// --db (or DB_PATH) was given.
func (c *Config) check(dbGiven bool) error {
	switch {
	case c.Audit.Retention < 0:
		return errors.New("--audit-retention must not be negative")
	case c.HTTPAddr == "":
		return errors.New("--http-addr must not be empty")
	case c.GRPCAddr == "":
		return errors.New("--grpc-addr must not be empty")
	case (c.TLS.CertFile == "") != (c.TLS.KeyFile == ""):
		return errors.New("--tls-cert-file and --tls-key-file go together")
	case c.TLS.ClientCAFile != "" && !c.TLS.On():
		return errors.New("--grpc-client-ca-file needs --tls-cert-file and --tls-key-file: client certificates are asked for in a TLS handshake")
	}
	return c.checkStore(dbGiven)
}

// checkStore refuses a store setting that cannot work.
func (c *Config) checkStore(dbGiven bool) error {
	switch {
	case c.Store != StoreBbolt && c.Store != StoreEtcd:
		return fmt.Errorf("--store %q: want bbolt or etcd", c.Store)
	case c.Store == StoreBbolt && c.DBPath == "":
		return errors.New("--db must not be empty")
	case c.Store == StoreEtcd && dbGiven:
		return errors.New("--store etcd keeps everything in etcd: --db (or DB_PATH) names a bbolt file and cannot go with it")
	case c.Store == StoreEtcd && len(c.Etcd.Endpoints) == 0:
		return errors.New("--store etcd needs --etcd-endpoints (or ETCD_ENDPOINTS)")
	case c.Store == StoreEtcd && c.Etcd.Prefix == "":
		return errors.New("--etcd-prefix must not be empty")
	case (c.Etcd.Cert == "") != (c.Etcd.Key == ""):
		return errors.New("--etcd-cert and --etcd-key go together")
	}
	return nil
}

// envOr is the environment's value of env, or def when it is empty.
func envOr(getenv func(string) string, env, def string) string {
	if v := getenv(env); v != "" {
		return v
	}
	return def
}

// given reports whether a setting was given as a flag or in the environment.
func given(fs *flag.FlagSet, getenv func(string) string, name, env string) bool {
	set := getenv(env) != ""
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkListeners refuses a public --debug-addr without --debug-addr-public
// and notes whether --site-addr is the default.
func checkListeners(c *Config, fs *flag.FlagSet, getenv func(string) string) error {
	if c.SiteAddr != "" {
		c.SiteAddrDefault = !given(fs, getenv, "site-addr", "SITE_ADDR")
	}
	if c.DebugAddr == "" || c.DebugAddrPublic {
		return nil
	}
	if !IsLoopback(c.DebugAddr) {
		return fmt.Errorf("--debug-addr %s is not a loopback address: its profiles and variables have no authentication; give --debug-addr-public to serve them there anyway", c.DebugAddr)
	}
	return nil
}

// IsLoopback reports whether addr (host:port) names only the loopback
// interface: 127.0.0.0/8, ::1 or localhost. An empty host (all interfaces)
// is not loopback.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MinNodeSecret is the shortest node secret accepted without
// --node-secret-insecure: the secret is a gateway's only credential.
const MinNodeSecret = 16

// addGateways registers the Tyk Gateway settings on fs when the service has
// them (on: management); the function returned reads them after parsing.
func addGateways(fs *flag.FlagSet, getenv func(string) string, on bool) func() (Gateways, error) {
	if !on {
		return func() (Gateways, error) { return Gateways{}, nil }
	}
	secret := AddSecret(fs, getenv, "node-secret", "NODE_SECRET", "Tyk Gateways' node_secret, which enables the gateway routes")
	var g Gateways
	insecure := fs.Bool("node-secret-insecure", false, fmt.Sprintf("accept a node secret under %d bytes (tests only: a short secret is guessed)", MinNodeSecret))
	apiSecret := AddSecret(fs, getenv, "gateway-api-secret", "GATEWAY_API_SECRET", "Tyk Gateways' secret, for their key API")
	fs.StringVar(&g.APIURL, "gateway-api-url", getenv("GATEWAY_API_URL"), "http:// or https:// URL of the Tyk Gateways' own API (one gateway or a Service in front of several), through which keys are issued (env GATEWAY_API_URL)")
	fs.StringVar(&g.Redis, "gateway-redis", getenv("GATEWAY_REDIS"), "redis:// or rediss:// URL of the gateways' Redis, for reload notifications (env GATEWAY_REDIS); its password from the environment only (env GATEWAY_REDIS_PASSWORD or the file env GATEWAY_REDIS_PASSWORD_FILE names)")
	return func() (Gateways, error) {
		var err error
		if g.NodeSecret, err = secret.Value(); err != nil {
			return Gateways{}, err
		}
		if g.NodeSecret != "" && len(g.NodeSecret) < MinNodeSecret && !*insecure {
			return Gateways{}, fmt.Errorf("the node secret is %d bytes, under %d: give a longer one (or --node-secret-insecure, for tests)", len(g.NodeSecret), MinNodeSecret)
		}
		if g.RedisPassword, err = EnvSecret(getenv, "GATEWAY_REDIS_PASSWORD")(); err != nil {
			return Gateways{}, err
		}
		if g.APISecret, err = apiSecret.Value(); err != nil {
			return Gateways{}, err
		}
		if err := checkGatewayAPI(g.APIURL, g.APISecret); err != nil {
			return Gateways{}, err
		}
		if g.Redis != "" && g.NodeSecret == "" {
			return Gateways{}, errors.New("--gateway-redis needs the node secret (--node-secret-file or NODE_SECRET) to sign notifications")
		}
		return g, nil
	}
}

// checkGatewayAPI refuses a gateway API URL that is not http(s)://host[/path]
// or carries credentials, and a URL without the secret. No error repeats
// the URL.
func checkGatewayAPI(raw, secret string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return errors.New("--gateway-api-url must be an http:// or https:// URL")
	case u.User != nil:
		return errors.New("--gateway-api-url must not carry credentials: the secret goes in --gateway-api-secret-file")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("--gateway-api-url must not have a query or fragment")
	case secret == "":
		return errors.New("--gateway-api-url needs the gateways' secret (--gateway-api-secret-file or GATEWAY_API_SECRET_FILE)")
	}
	return nil
}
