package api

import (
	"context"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
	"github.com/gatehouse/gatehouse/pkg/credential"
	"github.com/gatehouse/gatehouse/services/management/internal/store"
)

func (s *Server) CreateUser(ctx context.Context, req *managementv1.CreateUserRequest) (*managementv1.CreateUserResponse, error) {
	in := req.GetUser()
	email := strings.TrimSpace(in.GetEmailAddress())
	if email == "" {
		return nil, errUserInvalid
	}
	if err := checkEmail(email); err != nil {
		return nil, err
	}
	perms := map[string]string{}
	if in.GetUserPermissions() != nil {
		var err error
		if perms, err = permissions(in.GetUserPermissions()); err != nil {
			return nil, err
		}
	}
	if err := mayGrant(ctx, perms); err != nil {
		return nil, err
	}
	secret := credential.NewSecret()
	u, err := s.store.CreateUser(ctx, store.User{FirstName: in.GetFirstName(), LastName: in.GetLastName(), Email: email,
		Permissions: perms, KeyHash: credential.Hash(secret), Inactive: in.Active != nil && !*in.Active})
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	return &managementv1.CreateUserResponse{Status: "OK", Message: "User created", Meta: u.ID, Id: u.ID, AccessKey: secret}, nil
}

func checkEmail(email string) error {
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return badRequest("User object validation failed: email_address is not a valid address")
	}
	return nil
}

// permissions reads user_permissions: string values only; an area takes
// read, write or deny, IsAdmin takes admin, true or false.
func permissions(st *structpb.Struct) (map[string]string, error) {
	out := make(map[string]string, len(st.GetFields()))
	for area, v := range st.GetFields() {
		s, ok := v.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, badRequest(fmt.Sprintf("User object validation failed: user_permissions.%s must be a string", area))
		}
		val := s.StringValue
		switch {
		case area == "IsAdmin" && (val == "admin" || val == "true" || val == "false"):
		case area != "IsAdmin" && (val == "read" || val == "write" || val == "deny"):
		default:
			return nil, badRequest(fmt.Sprintf("User object validation failed: user_permissions.%s: %q is not a permission", area, val))
		}
		out[area] = val
	}
	return out, nil
}

// userMessage answers a stored user with the installation's org_id.
func (s *Server) userMessage(u store.User) *managementv1.User {
	perms := u.Permissions
	if perms == nil {
		perms = map[string]string{}
	}
	return &managementv1.User{Id: u.ID, FirstName: u.FirstName, LastName: u.LastName, EmailAddress: u.Email,
		UserPermissions: perms, Active: !u.Inactive, CreatedAt: u.CreatedAt.UTC().Format(time.RFC3339), OrgId: s.store.OrgID()}
}

func (s *Server) ListUsers(ctx context.Context, req *managementv1.ListUsersRequest) (*managementv1.ListUsersResponse, error) {
	offset, limit, err := paging(req.P)
	if err != nil {
		return nil, err
	}
	users, total, err := s.store.ListUsers(ctx, offset, limit)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	resp := &managementv1.ListUsersResponse{Users: make([]*managementv1.User, 0, len(users)), Pages: pages(total)}
	for _, u := range users {
		resp.Users = append(resp.Users, s.userMessage(u))
	}
	return resp, nil
}

func (s *Server) GetUser(ctx context.Context, req *managementv1.GetUserRequest) (*managementv1.GetUserResponse, error) {
	u, err := s.store.User(ctx, req.GetUserId())
	if err != nil {
		return nil, s.storeError(err, errUserNotFound)
	}
	return &managementv1.GetUserResponse{User: s.userMessage(u)}, nil
}

func (s *Server) UpdateUser(ctx context.Context, req *managementv1.UpdateUserRequest) (*managementv1.UpdateUserResponse, error) {
	in := req.GetUser()
	email := strings.TrimSpace(in.GetEmailAddress())
	if email != "" {
		if err := checkEmail(email); err != nil {
			return nil, err
		}
	}
	var perms map[string]string
	if in.GetUserPermissions() != nil {
		var err error
		if perms, err = permissions(in.GetUserPermissions()); err != nil {
			return nil, err
		}
	}
	if perms != nil {
		if err := mayGrant(ctx, perms); err != nil {
			return nil, err
		}
	}
	_, err := s.store.UpdateUser(ctx, req.GetUserId(), func(u *store.User) error {
		if err := mayChange(ctx, *u, perms); err != nil {
			return err
		}
		if in.Active != nil {
			u.Inactive = !*in.Active
		}
		if in.GetFirstName() != "" {
			u.FirstName = in.GetFirstName()
		}
		if in.GetLastName() != "" {
			u.LastName = in.GetLastName()
		}
		if email != "" {
			u.Email = email
		}
		if perms != nil {
			u.Permissions = perms
		}
		return nil
	})
	if err != nil {
		return nil, s.storeError(err, errUserNotFound)
	}
	return &managementv1.UpdateUserResponse{Status: "OK", Message: "User updated"}, nil
}

func (s *Server) DeleteUser(ctx context.Context, req *managementv1.DeleteUserRequest) (*managementv1.DeleteUserResponse, error) {
	if err := s.store.DeleteUser(ctx, req.GetUserId(), func(u store.User) error { return mayChange(ctx, u, nil) }); err != nil {
		return nil, s.storeError(err, errUserNotFound)
	}
	return &managementv1.DeleteUserResponse{Status: "OK", Message: "User deleted"}, nil
}

func (s *Server) ResetUserKey(ctx context.Context, req *managementv1.ResetUserKeyRequest) (*managementv1.ResetUserKeyResponse, error) {
	if err := mayResetKey(ctx, req.GetUserId()); err != nil {
		return nil, err
	}
	secret := credential.NewSecret()
	_, err := s.store.UpdateUser(ctx, req.GetUserId(), func(u *store.User) error {
		u.KeyHash = credential.Hash(secret)
		return nil
	})
	if err != nil {
		return nil, s.storeError(err, errUserNotFound)
	}
	return &managementv1.ResetUserKeyResponse{Status: "OK", Message: "User key reset", AccessKey: secret}, nil
}
