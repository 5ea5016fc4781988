package gossip

import (
	"encoding/json"
	"testing"
)

// FuzzMergeRemoteState feeds the state merge what a peer (or anyone who
// can reach the gossip port) might send: it may not panic, and it never
// changes what this node says of itself.
func FuzzMergeRemoteState(f *testing.F) {
	seed, _ := json.Marshal(map[string]*EndpointState{
		"127.0.0.2": {Generation: 5, States: map[ApplicationState]VersionedValue{Status: {Value: StatusNormal + ",1", Version: 3}}},
		"127.0.0.1": {Generation: 9, States: map[ApplicationState]VersionedValue{Status: {Value: StatusLeft, Version: 99}}},
	})
	f.Add(seed)
	f.Add([]byte(`{"127.0.0.3": null, "127.0.0.4": {"States": null}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		self := &EndpointState{Generation: 7, States: map[ApplicationState]VersionedValue{Status: {Value: StatusNormal + ",0", Version: 1}}, Alive: true}
		g := &Gossiper{opts: Options{Name: "127.0.0.1"}, endpoints: map[string]*EndpointState{"127.0.0.1": self},
			pending: map[string]bool{}, addrs: map[string]string{}, wake: make(chan struct{}, 1)}
		(*delegate)(g).MergeRemoteState(b, false)
		(*delegate)(g).MergeRemoteState(b, true)
		if got := g.Endpoint("127.0.0.1"); got.Generation != 7 || got.Get(Status) != StatusNormal+",0" {
			t.Fatalf("a remote state changed this node's own: %+v", got)
		}
		for e, s := range g.Endpoints() {
			if s == nil {
				t.Fatalf("endpoint %s has no state", e)
			}
			_ = StatusKind(s.Get(Status)) // every state known reads
		}
		_ = (*delegate)(g).LocalState(false)
	})
}
