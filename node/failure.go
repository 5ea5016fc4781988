package node

import (
	"errors"

	"github.com/sibyldb/sibyl/storage"
)

// onStorageFailure carries out commit_failure_policy and
// disk_failure_policy for a failure the engine reports. Stopping the
// transports (the native protocol and gossip, as Cassandra stops its
// client transports and gossip) takes the node out of the cluster's and
// the clients' way while an operator looks at it through the admin API.
func (n *Node) onStorageFailure(kind storage.FailureKind, err error) {
	policy, key := n.cfg.DiskFailurePolicy, "disk_failure_policy"
	if kind == storage.CommitLogFailure {
		policy, key = n.cfg.CommitFailurePolicy, "commit_failure_policy"
	}
	stop := false
	switch policy {
	case "stop":
		stop = kind != storage.CorruptionFailure
	case "stop_paranoid", "die":
		stop = true
	}
	n.metrics.storageFailures.WithLabelValues(kind.String()).Inc()
	log := n.cfg.Logger.Error().Err(err).Str("failure", kind.String()).Str(key, policy)
	if !stop {
		log.Msg("node: storage failure")
		return
	}
	if !n.failed.CompareAndSwap(false, true) {
		return // the transports are stopping already
	}
	log.Msg("node: storage failure; stopping the transports")
	go func() {
		if err := errors.Join(n.stopNative(), n.leaveCluster()); err != nil {
			n.cfg.Logger.Error().Err(err).Msg("node: stopping the transports")
		}
		if policy == "die" {
			n.cfg.Logger.Error().Str(key, policy).Msg("node: exiting")
			n.cfg.Exit(1)
		}
	}()
}
