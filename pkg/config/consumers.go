package config

import (
	"errors"
	"flag"
	"fmt"
)

// Consumers are the portal's settings for its consumer side (CONTRACT §3
// "Consumers"): how it reaches management, and who may register.
type Consumers struct {
	// ManagementGRPCAddr is management's gRPC address (--management-grpc-addr,
	// MANAGEMENT_GRPC_ADDR); empty: the routes that need management answer 503.
	ManagementGRPCAddr string
	// ManagementKey is the management API key the portal calls with
	// (--management-key-file, MANAGEMENT_KEY or MANAGEMENT_KEY_FILE).
	ManagementKey string
	// ManagementCAFile verifies management's TLS certificate
	// (--management-ca-file, MANAGEMENT_CA_FILE); empty: plain text.
	ManagementCAFile string
	// ManagementCertFile and ManagementKeyFile are the portal's client
	// certificate, for a management started with --grpc-client-ca-file
	// (--management-client-cert-file, --management-client-key-file;
	// MANAGEMENT_CLIENT_CERT_FILE, MANAGEMENT_CLIENT_KEY_FILE).
	ManagementCertFile, ManagementKeyFile string
	// DeveloperSignup is open, approval (default) or closed (--developer-signup, DEVELOPER_SIGNUP).
	DeveloperSignup string
}

// addConsumers registers the consumer settings on fs when the service has
// them (on: the portal); the function returned reads them after parsing.
func addConsumers(fs *flag.FlagSet, getenv func(string) string, on bool) func() (Consumers, error) {
	if !on {
		return func() (Consumers, error) { return Consumers{}, nil }
	}
	var c Consumers
	key := AddSecret(fs, getenv, "management-key", "MANAGEMENT_KEY", "management API key the portal calls management's gRPC API with")
	fs.StringVar(&c.ManagementGRPCAddr, "management-grpc-addr", getenv("MANAGEMENT_GRPC_ADDR"), "management's gRPC address (host:port), for the consumer routes: policy checks and keys (env MANAGEMENT_GRPC_ADDR)")
	fs.StringVar(&c.ManagementCAFile, "management-ca-file", getenv("MANAGEMENT_CA_FILE"), "CA certificate that signed management's TLS certificate; empty: plain text (env MANAGEMENT_CA_FILE)")
	fs.StringVar(&c.ManagementCertFile, "management-client-cert-file", getenv("MANAGEMENT_CLIENT_CERT_FILE"), "PEM client certificate the portal presents to management, when management requires one (--grpc-client-ca-file there); read again when it changes (env MANAGEMENT_CLIENT_CERT_FILE)")
	fs.StringVar(&c.ManagementKeyFile, "management-client-key-file", getenv("MANAGEMENT_CLIENT_KEY_FILE"), "PEM private key of --management-client-cert-file (env MANAGEMENT_CLIENT_KEY_FILE)")
	fs.StringVar(&c.DeveloperSignup, "developer-signup", envOr(getenv, "DEVELOPER_SIGNUP", "approval"), "developer registration: open (sign in at once), approval (an admin activates the account) or closed (env DEVELOPER_SIGNUP)")
	return func() (Consumers, error) {
		var err error
		if c.ManagementKey, err = key.Value(); err != nil {
			return Consumers{}, err
		}
		switch c.DeveloperSignup {
		case "open", "approval", "closed":
		default:
			return Consumers{}, fmt.Errorf("--developer-signup %q: want open, approval or closed", c.DeveloperSignup)
		}
		if (c.ManagementCertFile == "") != (c.ManagementKeyFile == "") {
			return Consumers{}, errors.New("--management-client-cert-file and --management-client-key-file go together")
		}
		if c.ManagementGRPCAddr != "" && c.ManagementKey == "" {
			return Consumers{}, errors.New("--management-grpc-addr needs the management API key (--management-key-file or MANAGEMENT_KEY)")
		}
		return c, nil
	}
}
