package app

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // the refused messages are compressed
	"google.golang.org/grpc/status"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/config"
	"github.com/gatehouse/gatehouse/pkg/grpcserver"
	"github.com/gatehouse/gatehouse/pkg/kv/etcdkv/etcdtest"
	"github.com/gatehouse/gatehouse/pkg/server/servertest"
)

// TestFrontDoorRevocation (issue 32): a key deactivated, reset or deleted
// through one replica is refused by the other replica's gRPC front door
// within grpcserver.VerifiedTTL, before its message is read: a compressed
// message over the method's limit answers Unauthenticated, not
// ResourceExhausted (which would mean it was decompressed). It was a
// minute, and a deactivated key passed the front door until then.
func TestFrontDoorRevocation(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd")
	}
	t.Parallel()
	c := etcdtest.Start(t, 1)
	onEtcd := func(cfg *config.Config) {
		cfg.Store, cfg.DBPath = config.StoreEtcd, ""
		cfg.Etcd = config.Etcd{Endpoints: c.Endpoints(), Prefix: "/gatehouse/management/"}
	}
	a := servertest.Start(t, Serve, "", adminToken, onEtcd)
	b := servertest.Start(t, Serve, "", adminToken, onEtcd)
	ia := &instance{t: t, base: a.Base}
	client := managementv1.NewManagementServiceClient(b.Conn)
	big := &managementv1.CreateUserRequest{User: &managementv1.UserInput{FirstName: strings.Repeat("a", 2<<20)}}
	for _, revoke := range []struct{ name, method, path, body string }{
		{"deactivated", "PUT", "/api/users/%s", `{"active":false}`},
		{"reset", "PUT", "/api/users/%s/actions/key/reset", ""},
		{"deleted", "DELETE", "/api/users/%s", ""},
	} {
		id, key := ia.createUser(`{"users":"write"}`)
		// Admitted at b's front door (and remembered): the big message is read and refused for its size.
		_, err := client.CreateUser(grpcCtx(key), big, grpc.UseCompressor("gzip"))
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("%s: a live key's big message: %v, want ResourceExhausted", revoke.name, err)
		}
		expect(t, revoke.name, ia.admin(revoke.method, strings.Replace(revoke.path, "%s", id, 1), nilIfEmpty(revoke.body)), 200, "")
		time.Sleep(grpcserver.VerifiedTTL + 100*time.Millisecond)
		_, err = client.CreateUser(grpcCtx(key), big, grpc.UseCompressor("gzip"))
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("%s on the other replica, %v later: %v, want Unauthenticated before the message is read", revoke.name, grpcserver.VerifiedTTL, err)
		}
	}
}
