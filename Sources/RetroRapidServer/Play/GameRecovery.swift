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
            let (nodeID, instance) = (cluster.nodeID, cluster.instance)
            let released = try worker.performAndWait { storage in
                try storage.cluster.join(nodeID: nodeID, instance: instance, now: storage.now, lease: ClusterLease.lease)
                return try storage.cluster.releaseAll(nodeID: nodeID, now: storage.now)
            }
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
}
