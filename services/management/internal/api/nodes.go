package api

import (
	"context"
	"time"

	managementv1 "github.com/gatehouse/gatehouse/gen/pb/gatehouse/management/v1"
)

// ListNodes lists the gateways registered through the gateway routes
// (package gateways), as the store keeps them.
func (s *Server) ListNodes(ctx context.Context, _ *managementv1.ListNodesRequest) (*managementv1.ListNodesResponse, error) {
	nodes, err := s.store.Nodes(ctx)
	if err != nil {
		return nil, s.storeError(err, errInternal)
	}
	out := &managementv1.ListNodesResponse{Nodes: make([]*managementv1.Node, 0, len(nodes))}
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, &managementv1.Node{
			Id: n.ID, Hostname: n.Hostname,
			Registered:    n.Registered.UTC().Format(time.RFC3339),
			LastHeartbeat: n.LastSeen.UTC().Format(time.RFC3339),
		})
	}
	return out, nil
}
