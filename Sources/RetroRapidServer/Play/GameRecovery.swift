import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// What `retrorapid serve` does at start with the games the last run left running: a run that
/// died (a crash, SIGKILL, power loss) never stored them. Each is ended from its last
/// checkpoint and stored as `server_crash`, its free play given back
/// (`RunningGameRepository.recoverAll` has the rules). A graceful stop stores every game
/// itself, deleting their rows, so after one there is nothing here to do.
///
/// In a cluster the games left running may be other nodes', still running: none is ended here.
/// The node joins (`ClusterRepository.join`, refused while another live process has its id)
/// and releases the games its last run held, so their players get them back, paused at their
/// last checkpoint, through whichever node they reconnect to; the ones nobody takes back
/// within the disconnect grace are stored as `server_crash` by the sweep (`GameHandoff`).
///
/// Threading rule: called once by `GameServer.init` on the main thread, before the server
/// listens (so before any player can start a game); the work runs on the storage thread and
/// the main thread waits for it, which only start-up may do.
enum GameRecovery {
    @discardableResult
    static func run(worker: DatabaseWorker, metrics: Metrics, logger: Logger,
                    cluster: ClusterMembership? = nil) throws -> [RecoveredGame] {
        if let cluster {
            let nodeID = cluster.nodeID
            let released = try joinWaitingOutADeadPredecessor(cluster, worker: worker, logger: logger)
            if released > 0 {
                logger.notice("let go of the games this node's last run held; their players get them back on any node", metadata: [
                    "cluster.node": nodeID, "games.released": String(released)])
            }
            return []
        }
        let recovered = try worker.performAndWait { storage in
            try storage.runningGames.recoverAll(now: storage.now)
        }
        guard !recovered.isEmpty else { return [] }
        let ended = metrics.counter("retrorapid_games_ended_total", help: "Games ended, by reason.", labelNames: ["reason"])
        var refunded = 0
        for game in recovered {
            let stored = game.recorded.game
            ended.increment(stored.endReason.rawValue)
            if stored.playRefunded { refunded += 1 }
            var metadata = [
                "game.id": stored.displayID, "game.score": String(stored.score), "game.steps": String(stored.steps),
                "game.end": stored.endReason.rawValue, "game.play_refunded": String(stored.playRefunded),
            ]
            if let problem = game.problem {
                metadata["error"] = problem
                logger.error("a game left running had damaged checkpoints; saved from what could be read", metadata: metadata)
            } else {
                logger.info("game left running by the last run saved", metadata: metadata)
            }
        }
        logger.notice("saved the games the last run left running (it did not stop cleanly)", metadata: [
            "games.recovered": String(recovered.count), "plays.refunded": String(refunded)])
        return recovered
    }

    /// Joins the cluster as this node and lets go of the games its last run held.
    ///
    /// A process that died (SIGKILL, a crash: the case a service manager restarts it for) leaves
    /// its heartbeat fresh for up to the lease, so the first refusal is waited out once, until
    /// that heartbeat is older than the lease. A refusal after that wait is another live process
    /// with this node id (its heartbeat moved on), and stands.
    private static func joinWaitingOutADeadPredecessor(_ cluster: ClusterMembership, worker: DatabaseWorker,
                                                       logger: Logger) throws -> Int {
        let (nodeID, instance, lease, gameURL) = (cluster.nodeID, cluster.instance, cluster.lease.lease, cluster.gameURL)
        var waited = false
        while true {
            do {
                return try worker.performAndWait { storage in
                    try storage.cluster.join(nodeID: nodeID, instance: instance, now: storage.now, lease: lease, gameURL: gameURL)
                    return try storage.cluster.releaseAll(nodeID: nodeID, now: storage.now)
                }
            } catch let inUse as ClusterNodeInUseError {
                guard !waited else { throw inUse }
                waited = true
                // Whole seconds are stored: one more second covers the rounding.
                let wait = min(lease + 1, max(0.5, inUse.seenAt.timeIntervalSinceNow + lease + 1))
                logger.notice("another process was node \(nodeID) moments ago; waiting for its heartbeat to lapse (it died, or is still running and this start will be refused)", metadata: [
                    "cluster.node": nodeID, "cluster.seen_at": UTCCivilTime.text(inUse.seenAt), "wait.seconds": String(format: "%.1f", wait)])
                Thread.sleep(forTimeInterval: wait)
            }
        }
    }
}
