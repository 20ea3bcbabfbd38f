import Foundation
import RetroRapidDomain
import RetroRapidLWS
import RetroRapidRules
import RetroRapidSupport

/// This node's part in a cluster's games (docs/ARCHITECTURE.md, "Where a game lives"): every
/// game it starts is claimed for it in `game_holders` (`ClusterRepository`); a player's game
/// held by another node is fetched here when they resume or quit it on this node; a game asked
/// for by another node is let go; the node's heartbeat; and the sweep that stores the games
/// nobody took back in time and deletes dead nodes' room codes.
///
/// Fetching a game held by node A, for a player on this node (B):
/// 1. B claims it (one conditional write). It succeeds at once if nobody holds it, A released
///    it, or A's heartbeat is older than the lease (A died).
/// 2. Otherwise B publishes `releaseGame` to A. A checkpoints the game's whole log, drops it from
///    memory (its connection, if any, gets `detached`), marks it released and publishes
///    `gameReleased`; B then claims it. If A does not answer within `releaseWaitMicroseconds`
///    (SIGKILL), B retries until A's lease has lapsed and claims it anyway, from the last
///    checkpoint A wrote.
/// 3. B rebuilds the game from seed, level and log (`Game(resuming:)`) and offers it paused with
///    a `snapshot`, exactly as a resume after a dropped connection (docs/PROTOCOL.md), or ends it
///    for a `quit`.
/// The bus only hints; every decision is the database's claim, so a lost message costs time
/// (the lease), never a game, and two nodes never both run one.
///
/// Threading rule: owned by the `WebSocketHub` on the libwebsockets service thread: its own timer
/// (`ServiceTimers.Timer.cluster`) calls `tick`, the bus's messages arrive through the mailbox
/// (`WebSocketHub.clusterMessage`), and the worker's completions come back there.
final class GameHandoff: RemoteGames, @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions and the bus's messages run.

    /// How often `tick` runs: the waits below are checked at this grain.
    static let tickMicroseconds: Int64 = 250_000
    /// How long a fetch waits for the holder's `gameReleased` before it waits for the lease.
    static let releaseWaitMicroseconds: Int64 = 2_000_000
    /// How often the sweep looks for games nobody holds.
    static let sweepMicroseconds: Int64 = 5_000_000

    let nodeID: String
    /// This process's random name: a second process started with the same node id is refused.
    let instance: String
    /// The heartbeat and lease every node of the cluster runs with.
    let lease: ClusterLease
    /// How long a fetch waits for one holder: its lease, one heartbeat for the second-granular
    /// times, and the release's wait.
    let patienceMicroseconds: Int64
    /// Where the other nodes' game connections are, read with each heartbeat.
    let directory: NodeDirectory
    /// Where this node's messages go (counted by kind there).
    let relay: ClusterRelay
    let worker: DatabaseWorker
    let connections: ConnectionRegistry
    let limits: WebSocketLimits
    let logger: Logger
    /// The running matches whose games move (`MatchHost`, a sibling the hub builds).
    unowned let matches: any HandedOverMatches
    /// Writes a game's whole log for the node that takes it.
    let checkpoints: CheckpointWriter

    /// What the node asks for, per player: at most one fetch at a time.
    private var fetches: [Int64: Fetch] = [:]
    /// Games let go of whose release is being written, by id (kept here if it fails).
    private var leaving: [String: MatchHost.PlayerSeat] = [:]
    /// Another node's `releaseGame` that came while this node was fetching the same player's
    /// game, by player: answered once the fetch is over (the game let go if it came here), so
    /// the claim this node is about to use is never released under it.
    private var releaseAfterFetch: [Int64: (gameID: String, asker: String)] = [:]
    private var nextHeartbeat: Int64 = 0
    /// When this node's heartbeat was last written (0 before the first).
    private var lastHeartbeat: Int64 = 0
    private var heartbeatInFlight = false
    private var nextSweep: Int64 = 0
    private var sweepInFlight = false

    enum Purpose {
        case resume, quit

        /// The message that asked, as `inReplyTo` names it.
        var type: String { self == .resume ? "resume" : "quit" }
    }

    private struct Fetch {
        var purpose: Purpose
        var identity: WebSocketConnection.Identity
        var connectionID: Int
        /// When `releaseGame` went out (nil: not asked yet), and to which node: a game that
        /// moved meanwhile (another node's fetch took it first) is asked of its new holder.
        var askedAt: Int64?
        var askedHolder: String?
        var retryAt: Int64
        var giveUpAt: Int64
        var inFlight = false
    }

    /// What the database said about the player's game.
    private enum FetchAnswer: Sendable {
        case none
        case claimed(RunningGameRecord)
        case held(GameHolder)
        case elsewhere(gameID: String)
    }

    init(cluster: ClusterMembership, relay: ClusterRelay, matches: any HandedOverMatches, checkpoints: CheckpointWriter,
         timers: ServiceTimers, worker: DatabaseWorker, connections: ConnectionRegistry, limits: WebSocketLimits, logger: Logger) {
        nodeID = cluster.nodeID
        instance = cluster.instance
        lease = cluster.lease
        patienceMicroseconds = Int64((cluster.lease.lease + cluster.lease.heartbeat) * 1_000_000) + Self.releaseWaitMicroseconds
        directory = cluster.directory
        self.relay = relay
        self.matches = matches
        self.checkpoints = checkpoints
        self.worker = worker
        self.connections = connections
        self.limits = limits
        self.logger = logger
        // Every `tickMicroseconds` until the node stops: once it is stopping its games are
        // being stored, and it leaves the cluster when they are (`leave`).
        timers.register(.cluster) { [unowned self, unowned timers] now in
            guard !self.matches.shuttingDown else { return }
            timers.schedule(.cluster, at: now + Self.tickMicroseconds)
            self.tick(now: now)
        }
        timers.schedule(.cluster, at: MonotonicClock.now() + Self.tickMicroseconds)
    }

    // MARK: - Starting (storage thread)

    /// A game's start in a cluster, on the storage thread: refused while the player has a
    /// running game anywhere; else begun (its play taken) and claimed for `nodeID`. A claim
    /// lost to a game of the player's started at the same moment on another node gives the
    /// play back and refuses too, so a player never runs two games.
    /// - Throws: `GameElsewhereError`, and what `RunningGameRepository.begin` throws.
    static func beginClaimed(_ start: RunningGameStart, nodeID: String, lease: TimeInterval, storage: StorageContext) throws -> QuotaStatus? {
        if let running = try storage.runningGames.running(playerID: start.playerID).first {
            throw GameElsewhereError(gameID: running.publicID)
        }
        let quota = try storage.runningGames.begin(start)
        switch try storage.cluster.claim(gameID: start.publicID, nodeID: nodeID, now: storage.now, lease: lease) {
        case .claimed:
            return quota
        case .playerHasAnotherGame(let other):
            try storage.runningGames.cancel(publicID: start.publicID)
            throw GameElsewhereError(gameID: other)
        case .held, .notRunning:
            // Not reached for a game begun just now; give it back rather than run it unheld.
            try storage.runningGames.cancel(publicID: start.publicID)
            throw GameElsewhereError(gameID: start.publicID)
        }
    }

    // MARK: - Fetching a game held elsewhere

    /// The player has no game on this node and asked to resume or quit: find theirs in the
    /// database and bring it here (see the type's comment). The answer goes to `connection`.
    func fetch(_ purpose: Purpose, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = purpose == .resume ? "resume" : "quit"
        if var pending = fetches[identity.playerID] {
            guard pending.connectionID != connection.id else {
                return connections.refuse(connection, ProtocolError(.resumePending,
                    "Your game is on its way from another server; the answer to your first \(pending.purpose.type) comes in a moment.",
                    inReplyTo: type))
            }
            // The newest connection asks, as on one node (where it takes the game and the one
            // before gets `detached`): the connection that asked first is told so now.
            if let older = connections[pending.connectionID], older.closing == nil {
                connections.refuse(older, ProtocolError(.gameTaken,
                    "Another connection of yours asked for your game after this one; it goes there. Send resume here to take it back.",
                    inReplyTo: pending.purpose.type))
            }
            pending.purpose = purpose
            pending.identity = identity
            pending.connectionID = connection.id
            fetches[identity.playerID] = pending
            return
        }
        let now = MonotonicClock.now()
        fetches[identity.playerID] = Fetch(purpose: purpose, identity: identity, connectionID: connection.id,
                                           retryAt: now, giveUpAt: now + patienceMicroseconds)
        attempt(identity.playerID)
    }

    private func attempt(_ playerID: Int64) {
        guard var fetch = fetches[playerID], !fetch.inFlight else { return }
        fetch.inFlight = true
        fetches[playerID] = fetch
        let (nodeID, leaseSeconds) = (self.nodeID, lease.lease)
        // On the player's lane, with the rest of their game's jobs (start, checkpoints, record).
        worker.perform(orderedBy: playerID, { storage -> FetchAnswer in
            guard let game = try storage.runningGames.running(playerID: playerID).first else { return .none }
            switch try storage.cluster.claim(gameID: game.publicID, nodeID: nodeID, now: storage.now, lease: leaseSeconds) {
            case .claimed:
                // A holder that died left the game's newest moves in its checkpoint slices.
                try storage.runningGames.gatherCheckpoints(now: storage.now, lease: leaseSeconds)
                // Read again after the claim: the holder's last checkpoint came before its release.
                return try storage.runningGames.running(publicID: game.publicID).map(FetchAnswer.claimed) ?? .none
            case .held(let holder): return .held(holder)
            case .notRunning: return .none
            case .playerHasAnotherGame(let other): return .elsewhere(gameID: other)
            }
        }, then: { [self] result in
            answered(result, playerID: playerID)
        })
    }

    private func answered(_ result: Result<FetchAnswer, any Error>, playerID: Int64) {
        defer { fetchEnded(playerID) }
        guard var fetch = fetches[playerID] else { return }
        fetch.inFlight = false
        let now = MonotonicClock.now()
        let connection = connections[fetch.connectionID].flatMap { $0.closing == nil ? $0 : nil }
        let type = fetch.purpose == .resume ? "resume" : "quit"
        switch result {
        case .success(.claimed(let record)):
            fetches[playerID] = nil
            takeOver(record, for: fetch, on: connection, now: now)
        case .success(.none):
            fetches[playerID] = nil
            guard let connection else { return }
            if fetch.purpose == .resume {
                connections.refuse(connection, ProtocolError(.noGame, "You have no game to resume; send start for a new one.", inReplyTo: type))
            } else {
                matches.quitGame(on: connection, now: now)  // says there is no game, as on a single node
            }
        case .success(.held(let holder)):
            guard connection != nil, now < fetch.giveUpAt else { return giveUp(fetch, on: connection) }
            if fetch.askedAt == nil || fetch.askedHolder != holder.nodeID {
                relay.publish(.releaseGame(gameID: holder.gameID, playerID: playerID, owner: holder.nodeID))
                fetch.askedAt = now
                fetch.askedHolder = holder.nodeID
                fetch.giveUpAt = max(fetch.giveUpAt, now + patienceMicroseconds)
                fetch.retryAt = now + Self.releaseWaitMicroseconds
                logger.info("asked another node for a player's game", metadata: [
                    "game.id": holder.gameID, "cluster.holder": holder.nodeID])
            } else {
                // The holder did not answer: its lease decides (it ends at most a lease after its last heartbeat).
                fetch.retryAt = now + Int64(lease.heartbeat * 1_000_000) / 2
            }
            fetches[playerID] = fetch
        case .success(.elsewhere):
            guard connection != nil, now < fetch.giveUpAt else { return giveUp(fetch, on: connection) }
            fetch.retryAt = now + Int64(lease.heartbeat * 1_000_000) / 2
            fetches[playerID] = fetch
        case .failure(let error):
            fetches[playerID] = nil
            logger.error("could not fetch a player's game", metadata: ["player.row": String(playerID), "error": "\(error)"])
            if let connection {
                connections.refuse(connection, ProtocolError(.unavailable, "Your game could not be fetched just now; try again.", inReplyTo: type))
            }
        }
    }

    /// Once the player's fetch is over (whatever its answer), the release another node asked
    /// for meanwhile is answered: the game let go of if it came here, else its row released.
    private func fetchEnded(_ playerID: Int64) {
        guard fetches[playerID] == nil, let asked = releaseAfterFetch.removeValue(forKey: playerID) else { return }
        letGo(asked.gameID, playerID: playerID, to: asked.asker)
    }

    private func giveUp(_ fetch: Fetch, on connection: WebSocketConnection?) {
        defer { fetchEnded(fetch.identity.playerID) }
        fetches[fetch.identity.playerID] = nil
        guard let connection else { return }
        connections.refuse(connection, ProtocolError(.unavailable,
            "Your game is held by another server that does not let go of it; try again in a few seconds.",
            inReplyTo: fetch.purpose == .resume ? "resume" : "quit"))
    }

    /// The claim is this node's: rebuild the game and hand it to the player (or end it).
    private func takeOver(_ record: RunningGameRecord, for fetch: Fetch, on connection: WebSocketConnection?, now: Int64) {
        let game: Game
        do {
            game = try Game(resuming: InputLog(encoded: record.inputLog), seed: record.seed, level: record.level,
                            rulesVersion: record.rulesVersion)
        } catch {
            // Unreadable checkpoints: let go again, so the sweep stores what can be read of it.
            logger.error("a game taken over cannot be rebuilt from its checkpoints", metadata: [
                "game.id": record.publicID, "error": "\(error)"])
            release(record.publicID, playerID: record.playerID)
            if let connection {
                connections.refuse(connection, ProtocolError(.unavailable, "Your game could not be rebuilt; it will be saved as it stood.",
                                                             inReplyTo: fetch.purpose == .resume ? "resume" : "quit"))
            }
            return
        }
        guard let placed = matches.adopt(gameID: record.publicID, playerID: record.playerID,
                                      playerName: fetch.identity.displayName, game: game, practice: record.practice,
                                      startedAt: record.startedAt, playedMilliseconds: record.durationMilliseconds,
                                      road: record.road) else {
            // A game of the player's runs here already, or this one had crashed at its last
            // checkpoint (and is being stored as that crash).
            guard let connection else { return }
            if matches.game(of: record.playerID) != nil { return matches.resume(for: fetch.identity, on: connection, now: now) }
            connections.refuse(connection, ProtocolError(.gameOver, "Game \(record.publicID) is over; start a new one.",
                                                         inReplyTo: fetch.purpose == .resume ? "resume" : "quit"))
            return
        }
        // The player's connection may have gone meanwhile: the game then waits here, paused.
        guard let connection else { return }
        switch fetch.purpose {
        case .resume:
            matches.resume(placed, on: connection, now: now)
        case .quit:
            matches.takeOver(placed, on: connection)
            matches.quitGame(on: connection, now: now)
        }
    }

    // MARK: - Letting go of a game another node asks for

    /// The bus's messages, on the service thread (`WebSocketHub.clusterMessage`).
    func received(_ envelope: ClusterEnvelope) {
        switch envelope.message {
        case .releaseGame(let gameID, let playerID, let owner) where owner == nodeID:
            letGo(gameID, playerID: playerID, to: envelope.sender)
        case .gameStays(let gameID, let playerID):
            // A race's game stays where its race runs: the player is sent there.
            guard let fetch = fetches.removeValue(forKey: playerID) else { return }
            fetchEnded(playerID)
            guard let connection = connections[fetch.connectionID], connection.closing == nil else { return }
            var refusal = ProtocolError(.gameElsewhere,
                "Game \(gameID) is a race running on server \(envelope.sender): connect to it to take the game back.",
                inReplyTo: fetch.purpose == .resume ? "resume" : "quit")
            refusal.node = envelope.sender
            connections.refuse(connection, refusal)
        case .gameReleased(_, let playerID):
            guard var fetch = fetches[playerID] else { return }
            fetch.retryAt = MonotonicClock.now()
            fetches[playerID] = fetch
            attempt(playerID)
        default:
            break
        }
    }

    /// Checkpoints the game's whole log, marks it released and says so; its connection here,
    /// if any, is told the game moved. A game that is ending here (a held crash) stays: this
    /// node stores it, and the asking node then finds it gone.
    private func letGo(_ gameID: String, playerID: Int64, to asker: String) {
        guard let (placed, log) = matches.letGo(gameID: gameID, playerID: playerID) else {
            // Being fetched here: this node may hold the claim already, and its game is about
            // to run here. Letting go of the row now would let two nodes run it; the answer
            // waits for the fetch (`fetchEnded`).
            if fetches[playerID] != nil {
                releaseAfterFetch[playerID] = (gameID, asker)
                return
            }
            // Not running here (this process never had it, or it ended): release the row in
            // case it names this node, so the asker need not wait for the lease.
            if matches.game(of: playerID)?.gameID != gameID { release(gameID, playerID: playerID) }
            // A race's seat never moves while its race runs: the asker sends the player here.
            else if let placed = matches.playerSeat(of: playerID), placed.match.movableSeat == nil {
                relay.publish(.gameStays(gameID: gameID, playerID: playerID))
            }
            return
        }
        let nodeID = self.nodeID
        leaving[gameID] = placed
        checkpoints.writeWhole(log, playerID: playerID, then: { storage in
            try storage.cluster.release(gameID: gameID, nodeID: nodeID, now: storage.now)
        }, completion: { [self] result in
            let placed = leaving.removeValue(forKey: gameID)
            switch result {
            case .success:
                relay.publish(.gameReleased(gameID: gameID, playerID: playerID))
                logger.info("game handed to another node", metadata: [
                    "game.id": gameID, "game.steps": String(log.steps), "cluster.to": asker])
            case .failure(let error):
                logger.error("could not hand a game to another node; it stays here", metadata: [
                    "game.id": gameID, "error": "\(error)"])
                if let placed { matches.keep(placed) }
            }
        })
    }

    /// Marks the game released if this node holds it, and says so.
    private func release(_ gameID: String, playerID: Int64) {
        let nodeID = self.nodeID
        worker.perform(orderedBy: playerID, { storage in
            try storage.cluster.release(gameID: gameID, nodeID: nodeID, now: storage.now)
        }, then: { [self] result in
            if case .success(true) = result { relay.publish(.gameReleased(gameID: gameID, playerID: playerID)) }
        })
    }

    // MARK: - Heartbeat, sweep, waits

    /// Every `tickMicroseconds`: the fetches whose wait is over, the heartbeat, the sweep.
    func tick(now: Int64) {
        for (playerID, fetch) in fetches where !fetch.inFlight && fetch.retryAt <= now {
            attempt(playerID)
        }
        if !heartbeatInFlight && now >= nextHeartbeat {
            heartbeatInFlight = true
            nextHeartbeat = now + Int64(lease.heartbeat * 1_000_000)
            let (nodeID, instance) = (self.nodeID, self.instance)
            // Only games running now are checked: each was claimed before it began here.
            let running = matches.runningGameIDs
            worker.perform({ storage -> (Bool, Set<String>, [String: String]) in
                let mine = try storage.cluster.heartbeat(nodeID: nodeID, instance: instance, now: storage.now)
                return (mine, try storage.cluster.heldGames(nodeID: nodeID), try storage.cluster.gameURLs())
            }, then: { [self] result in
                heartbeatInFlight = false
                if case .success(let (_, _, urls)) = result { directory.replace(with: urls) }
                switch result {
                case .success(let (true, held, _)):
                    // A lapse longer than the lease: other nodes may have gathered this process's
                    // checkpoint slices while it still wrote more, so its next round writes every
                    // game whole again (docs/STORAGE.md, "Checkpoint slices").
                    let written = MonotonicClock.now()
                    if lastHeartbeat > 0, written - lastHeartbeat > Int64(lease.lease * 1_000_000) {
                        logger.warning("this node's heartbeat lapsed past its lease; its games' checkpoints are written whole again",
                                       metadata: ["cluster.node": nodeID])
                        checkpoints.compactNext()
                    }
                    lastHeartbeat = written
                    // A game another node took while this one's heartbeat had lapsed (a stalled
                    // node, not a dead one) runs there now: it must not run on here too.
                    for gameID in running.subtracting(held) {
                        logger.warning("a game this node ran was taken by another node (this node's heartbeat had lapsed); dropped here",
                                       metadata: ["game.id": gameID])
                        matches.drop(gameID: gameID)
                    }
                case .success((false, _, _)):
                    logger.critical("another process has taken this node's id (this one was taken for dead); its games may run twice",
                                    metadata: ["cluster.node": nodeID])
                case .failure(let error):
                    logger.error("could not write this node's heartbeat", metadata: ["error": "\(error)"])
                }
            })
        }
        if !sweepInFlight && now >= nextSweep {
            sweepInFlight = true
            nextSweep = now + Self.sweepMicroseconds
            sweep()
        }
    }

    /// Stores the games no live node has held for the disconnect grace (their holder died, or
    /// let go of them, and their player did not come back), as a restart stores a crashed
    /// node's: `server_crash`, play given back within the daily cap. Each is claimed first, so
    /// one node stores it, on its player's lane; one this node runs or is fetching is left
    /// alone (a claim by the holder itself succeeds, so the sweep must not take it from its
    /// own fetch).
    private func sweep() {
        let (grace, leaseSeconds) = (TimeInterval(limits.disconnectGraceSeconds), lease.lease)
        worker.perform({ storage in
            try storage.cluster.orphans(now: storage.now, lease: leaseSeconds, grace: grace)
        }, then: { [self] result in
            sweepInFlight = false
            switch result {
            case .success(let orphans):
                for orphan in orphans where fetches[orphan.playerID] == nil && matches.game(of: orphan.playerID)?.gameID != orphan.gameID {
                    store(orphan.gameID, playerID: orphan.playerID)
                }
            case .failure(let error):
                logger.error("could not look for the games nobody holds", metadata: ["error": "\(error)"])
            }
        })
        removeDeadRoomPlaces(grace: grace)
        gatherGoneSlices(grace: grace)
    }

    /// Gathers the checkpoint slices of processes gone from the cluster (died, left, restarted)
    /// into a log per game once they have not been seen for the disconnect grace, as the
    /// orphans above: a process that left with no game still running leaves no slices behind.
    /// Not at the lease: a node that only stalled keeps writing its slices, and a gathering
    /// beside them is only safe for a game the gatherer has claimed (which the stalled node
    /// drops). A claim gathers at the lease. A separate job, so a failure here holds up no game.
    private func gatherGoneSlices(grace: TimeInterval) {
        let after = max(lease.lease, grace)
        worker.perform({ storage in
            try storage.runningGames.gatherCheckpoints(now: storage.now, lease: after)
        }, then: { [self] result in
            switch result {
            case .success(let games) where games > 0:
                logger.info("checkpoints of a gone process gathered", metadata: ["games.count": String(games)])
            case .success:
                break
            case .failure(let error):
                logger.error("could not gather the checkpoints of gone processes", metadata: ["error": "\(error)"])
            }
        })
    }

    /// Deletes the room codes (`room_places`) of nodes not seen for the disconnect grace: their
    /// rooms died with them (their racers' games are the orphans above), and no close will ever
    /// remove them. A separate job, so a failure here holds up no game.
    private func removeDeadRoomPlaces(grace: TimeInterval) {
        // At least the lease, as every "dead node" test; a node stalled briefly keeps its codes.
        let after = max(lease.lease, grace)
        worker.perform({ storage in
            try storage.roomPlaces.removeDead(now: storage.now, lease: after)
        }, then: { [self] result in
            switch result {
            case .success(let removed) where removed > 0:
                logger.info("room codes of dead nodes removed", metadata: ["rooms.removed": String(removed)])
            case .success:
                break
            case .failure(let error):
                logger.error("could not remove the room codes of dead nodes", metadata: ["error": "\(error)"])
            }
        })
    }

    private func store(_ gameID: String, playerID: Int64) {
        let (nodeID, leaseSeconds) = (self.nodeID, lease.lease)
        worker.perform(orderedBy: playerID, { storage -> RecordedGame? in
            guard case .claimed = try storage.cluster.claim(gameID: gameID, nodeID: nodeID, now: storage.now,
                                                           lease: leaseSeconds) else { return nil }
            try storage.runningGames.gatherCheckpoints(now: storage.now, lease: leaseSeconds)
            return try Self.storeAsServerCrash(gameID, storage: storage)
        }, then: { [self] result in
            switch result {
            case .success(let recorded?):
                let game = recorded.game
                logger.info("game nobody took back saved", metadata: [
                    "game.id": game.displayID, "game.score": String(game.score), "game.steps": String(game.steps),
                    "game.end": game.endReason.rawValue, "game.play_refunded": String(game.playRefunded)])
            case .success(nil):
                break  // taken meanwhile
            case .failure(let error):
                logger.error("could not save a game nobody took back", metadata: ["game.id": gameID, "error": "\(error)"])
            }
        })
    }

    /// Ends a running game this node claimed from its checkpoints and stores it, by the rules
    /// `RunningGameRepository.recoverAll` applies at a single node's start (`RunningGameRecovery`):
    /// re-simulated, `server_crash` (or the `crash` its checkpoint already shows), its free
    /// play given back unless the player's crash refunds of that day are spent. The refund and
    /// the store are one transaction, so a node dying in between leaves the game running for
    /// the next sweep, never a play given back twice or beyond the cap.
    static func storeAsServerCrash(_ gameID: String, storage: StorageContext) throws -> RecordedGame? {
        try storage.runningGames.recover(publicID: gameID, now: storage.now)?.recorded
    }

    // MARK: - Start and stop

    /// At a graceful stop, after every game was stored: this node's row goes, so its id is
    /// free at once for its next start.
    func leave() {
        let (nodeID, instance) = (self.nodeID, self.instance)
        worker.perform({ storage in try storage.cluster.leave(nodeID: nodeID, instance: instance) }, then: { [self] result in
            if case .failure(let error) = result {
                logger.warning("could not remove this node's row; its id is free once its lease ends", metadata: ["error": "\(error)"])
            }
        })
    }
}

/// A start refused because the player's game `gameID` runs (or waits) on some node.
struct GameElsewhereError: Error, Sendable {
    let gameID: String
}

/// What moving games between nodes asks of the running matches (`MatchHost`): a player's game
/// found, adopted from its checkpoint, resumed, ended, let go of, kept or dropped. Service
/// thread.
protocol HandedOverMatches: AnyObject {
    var shuttingDown: Bool { get }
    var runningGameIDs: Set<String> { get }
    func game(of playerID: Int64) -> GameSession?
    func playerSeat(of playerID: Int64) -> MatchHost.PlayerSeat?
    func adopt(gameID: String, playerID: Int64, playerName: String?, game: Game, practice: Bool, startedAt: Date,
               playedMilliseconds: Int, road: GameRoad) -> MatchHost.PlayerSeat?
    func resume(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection, now: Int64)
    func resume(_ placed: MatchHost.PlayerSeat, on connection: WebSocketConnection, now: Int64)
    func takeOver(_ placed: MatchHost.PlayerSeat, on connection: WebSocketConnection)
    func quitGame(on connection: WebSocketConnection, now: Int64)
    func letGo(gameID: String, playerID: Int64) -> (placed: MatchHost.PlayerSeat, log: GameCheckpoint)?
    func keep(_ placed: MatchHost.PlayerSeat)
    func drop(gameID: String)
}
