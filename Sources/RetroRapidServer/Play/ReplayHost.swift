import Foundation
import RetroRapidDomain
import RetroRapidLWS
import RetroRapidRules
import RetroRapidSupport

/// Replays and ghost races (docs/PROTOCOL.md, "Replays and ghosts"), as matches of the
/// `MatchHost`:
/// - a replay is a match of one seat a `ReplaySession` drives, with the connection that asked
///   as its one watcher: it gets `replaying`, then the stored game's frames at real speed, and
///   controls it with `replayControl`. Nobody else can find that seat, and the match is dropped
///   as soon as its watcher leaves (`stopWatching`, another `replay` or `watch`, a closed
///   connection), so a connection holds at most one replay and none outlives its watcher.
/// - a ghost race is a practice match of two seats started at the same moment: the player's
///   new `GameSession` on the stored game's seed and level, and the stored game as a ghost
///   (`ReplaySession` in ghost mode), whose `ghost` messages go to the whole match (the
///   player and their watchers). The ghost pauses while the player's game does, and goes when
///   the player's game ends.
///
/// Stored games are read on the storage thread (`GameRepository.game(publicID:)`). Another
/// player's game on today's daily road is `replay_hidden`: its replay would give the road away
/// before the day ends.
///
/// Threading rule: owned by the `WebSocketHub` on the libwebsockets service thread; the worker's
/// completions come back through the mailbox, on that thread.
final class ReplayHost: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    let limits: WebSocketLimits
    let connections: ConnectionRegistry
    let worker: DatabaseWorker
    let logger: Logger
    let role: NodeRole
    /// Cancels the ghost race's practice start that cannot go on.
    let recorder: GameRecorder
    /// The running matches a replay or ghost race is one of (`MatchHost`, a sibling).
    unowned let matches: any ReplayedMatches
    /// The watchers (`WatchHost`, a sibling): a replay's watcher leaves any other watch first.
    unowned let seatWatchers: any MatchSeatWatchers

    /// The replay or ghost race each connection waits for (connection id → request number):
    /// one at a time. A later `replay` replaces the one waiting; its answer is dropped.
    private var pending: [Int: Pending] = [:]
    private var lastRequest = 0
    /// Replay matches and ghost races the host runs now (in the logs: a leak would show).
    private(set) var replaysRunning = 0
    private(set) var ghostRacesRunning = 0

    private struct Pending {
        let request: Int
        let ghost: Bool
    }

    init(role: NodeRole, limits: WebSocketLimits, connections: ConnectionRegistry, recorder: GameRecorder, worker: DatabaseWorker,
         logger: Logger, matches: any ReplayedMatches, seatWatchers: any MatchSeatWatchers) {
        self.role = role
        self.recorder = recorder
        self.limits = limits
        self.connections = connections
        self.worker = worker
        self.logger = logger
        self.matches = matches
        self.seatWatchers = seatWatchers
    }

    // MARK: - Loading a stored game

    private enum Loaded: Sendable {
        case found(GameRecord, playerName: String?)
        case notFound
        /// The ghost race's practice game was begun (its `running_games` row) for this id.
        case ghostBegun(GameRecord, playerName: String?, gameID: String)
        case hidden(day: String)
        case notReplayable(String)
    }

    /// The stored game's refusal for `playerID`, if any: another player's game on today's road.
    private static func hidden(_ record: GameRecord, from playerID: Int64, now: Date) -> String? {
        guard let day = record.road.day, record.playerID != playerID, day == UTCDay(containing: now) else { return nil }
        return day.text
    }

    /// Reads the game on the storage thread; for a ghost race also begins the practice game's
    /// `running_games` row (claimed for this node in a cluster), once the game is known to be
    /// raceable.
    private func load(_ gameID: String, ghost: Bool, for identity: WebSocketConnection.Identity,
                      on connection: WebSocketConnection, then answer: @escaping @Sendable (Loaded, WebSocketConnection) -> Void) {
        lastRequest += 1
        let request = lastRequest
        pending[connection.id] = Pending(request: request, ghost: ghost)
        let connectionID = connection.id
        let playerID = identity.playerID
        let (nodeID, lease) = (role.nodeID, role.lease)
        let type = ghost ? "raceGhost" : "replay"
        worker.perform(orderedBy: playerID, { storage -> Loaded in
            guard let record = try storage.games.game(publicID: gameID) else { return .notFound }
            if let day = Self.hidden(record, from: playerID, now: storage.now) { return .hidden(day: day) }
            do {
                let log = try InputLog(encoded: record.inputLog)
                _ = try Replay.run(seed: record.seed, level: record.level, log: log, rulesVersion: record.rulesVersion)
            } catch {
                return .notReplayable("\(error)")
            }
            let name = try? storage.players.player(id: record.playerID).displayName
            guard ghost else { return .found(record, playerName: name) }
            let newID = Match.newGameID()
            let start = RunningGameStart(publicID: newID, playerID: playerID, level: record.level, seed: record.seed,
                                         practice: true, startedAt: storage.now, road: .ghost)
            if let nodeID { _ = try GameHandoff.beginClaimed(start, nodeID: nodeID, lease: lease, storage: storage) } else { _ = try storage.runningGames.begin(start) }
            return .ghostBegun(record, playerName: name, gameID: newID)
        }, then: { [self] result in
            guard let connection = connections[connectionID], connection.closing == nil else {
                if case .success(.ghostBegun(_, _, let newID)) = result { recorder.cancelStart(gameID: newID, playerID: playerID) }
                if pending[connectionID]?.request == request { pending[connectionID] = nil }
                return
            }
            guard pending[connectionID]?.request == request else {
                // Replaced by a later request from the same connection.
                if case .success(.ghostBegun(_, _, let newID)) = result { recorder.cancelStart(gameID: newID, playerID: playerID) }
                return
            }
            pending[connectionID] = nil
            switch result {
            case .success(.notFound):
                refuse(connection, ProtocolError(.gameNotFound,
                    "No stored game has the id \(gameID.prefix(64)); a game still running can be watched (watch).", inReplyTo: type))
            case .success(.hidden(let day)):
                refuse(connection, ProtocolError(.replayHidden,
                    "Game \(gameID) is on the daily road of \(day): it can be replayed once that day is over (00:00 UTC).", inReplyTo: type))
            case .success(.notReplayable(let reason)):
                refuse(connection, ProtocolError(.notReplayable, "Game \(gameID) cannot be replayed by this server: \(reason).", inReplyTo: type))
            case .success(let loaded):
                answer(loaded, connection)
            case .failure(let error as GameElsewhereError):
                refuse(connection, ProtocolError(.gameInProgress,
                    "Game \(error.gameID) is waiting for you: send resume to go on with it, or quit to end it, before racing a ghost.",
                    inReplyTo: type))
            case .failure(let error):
                logger.error("could not load a stored game", metadata: ["game.id": String(gameID.prefix(64)), "error": "\(error)"])
                refuse(connection, ProtocolError(.unavailable, "The game could not be loaded just now; try again.", inReplyTo: type))
            }
        })
    }

    // MARK: - replay

    func replay(gameID: String, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        if let refusal = refusal(of: "replay", on: connection) { return refuse(connection, refusal) }
        if pending[connection.id]?.ghost == true {
            return refuse(connection, ProtocolError(.startPending, "A ghost race is starting on this connection.", inReplyTo: "replay"))
        }
        load(gameID, ghost: false, for: identity, on: connection) { [self] loaded, connection in
            guard case .found(let record, let name) = loaded else { return }
            if let refusal = refusal(of: "replay", on: connection) { return refuse(connection, refusal) }
            startReplay(record, playerName: name, on: connection)
        }
    }

    /// What stops a `replay` or `raceGhost` on this connection now, if anything.
    private func refusal(of type: String, on connection: WebSocketConnection) -> ProtocolError? {
        if matches.shuttingDown {
            return ProtocolError(.shuttingDown, "The server is restarting; try again in a moment.", inReplyTo: type)
        }
        if let address = connection.seat {
            let gameID = matches.match(id: address.match)?.seat(at: address)?.driver.gameID ?? "?"
            return ProtocolError(.gameInProgress,
                "This connection plays game \(gameID); finish or quit it first, or use another tab or device.", inReplyTo: type)
        }
        return nil
    }

    private func startReplay(_ record: GameRecord, playerName: String?, on connection: WebSocketConnection) {
        let now = MonotonicClock.now()
        let replay: ReplaySession
        do {
            replay = try ReplaySession(record: record, mode: .replay, now: now)
        } catch {
            return refuse(connection, ProtocolError(.notReplayable,
                "Game \(record.displayID) cannot be replayed by this server: \(error).", inReplyTo: "replay"))
        }
        // The connection's watch (a game, or its replay before this one) ends: one at a time.
        if connection.watching != nil { seatWatchers.forget(connection) }
        let match = Match(id: matches.nextID(), kind: .replay, seed: record.seed, startsAt: now, drivers: [replay])
        let seat = match.seats[0]
        seat.playerName = playerName
        guard matches.add(match) else {
            return refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; try again in a moment.", inReplyTo: "replay"))
        }
        replaysRunning += 1
        seat.addWatcher(connection)
        connection.watching = seat.address
        connections.send(.replaying(ServerMessage.Replaying(
            playerName: playerName, level: record.level, score: record.score, steps: record.steps, reason: record.endReason,
            game: replay.snapshot, playing: replay.playing)), to: connection)
        matches.refreshIdleTimeout(connection)
        logger.info("replaying a game", metadata: [
            "ws.connection.id": String(connection.id), "game.id": replay.gameID, "replays.running": String(replaysRunning)])
    }

    /// A watcher left `seat`: a replay nobody watches is dropped.
    func watcherLeft(_ seat: MatchSeat, of match: Match) {
        guard match.kind == .replay, seat.watchers.isEmpty, matches.match(id: match.id) === match else { return }
        matches.discard(match)
        replaysRunning -= 1
        logger.info("replay dropped: nobody watches it", metadata: [
            "game.id": seat.driver.gameID, "replays.running": String(replaysRunning)])
    }

    // MARK: - replayControl

    func control(_ control: ClientMessage.ReplayControl, on connection: WebSocketConnection, now: Int64) {
        guard let address = connection.watching, let match = matches.match(id: address.match), match.kind == .replay,
              let seat = match.seat(at: address), let replay = seat.driver as? ReplaySession else {
            return refuse(connection, ProtocolError(.notWatching, "This connection is not replaying a game; send replay first.",
                                                    inReplyTo: "replayControl"))
        }
        var messages: [ServerMessage]
        switch control {
        case .pause:
            replay.pause(now: now)
            messages = [replay.replayState]
        case .play:
            let restarted = replay.play(now: now)
            messages = [replay.replayState]
            if restarted { messages.append(.snapshot(replay.snapshot)) }
        case .seek(let step):
            switch replay.seek(step: step, now: now) {
            case .success(let snapshot): messages = [replay.replayState, .snapshot(snapshot)]
            case .failure(let error): return refuse(connection, error.replying(to: "replayControl"))
            }
        }
        seat.send(messages, through: connections)
        matches.reschedule(match)
    }

    // MARK: - raceGhost

    func raceGhost(gameID: String, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        if let refusal = refusal(of: "raceGhost", on: connection) { return refuse(connection, refusal) }
        if let placed = matches.playerSeat(of: identity.playerID) {
            return refuse(connection, ProtocolError(.gameInProgress,
                "Game \(placed.session.gameID) is waiting for you: send resume to go on with it, or quit to end it, before racing a ghost.",
                inReplyTo: "raceGhost"))
        }
        if pending[connection.id] != nil {
            return refuse(connection, ProtocolError(.startPending, "A replay or ghost race is already starting on this connection.",
                                                    inReplyTo: "raceGhost"))
        }
        load(gameID, ghost: true, for: identity, on: connection) { [self] loaded, connection in
            guard case .ghostBegun(let record, let name, let newID) = loaded else { return }
            if let refusal = refusal(of: "raceGhost", on: connection) {
                recorder.cancelStart(gameID: newID, playerID: identity.playerID)
                return refuse(connection, refusal)
            }
            startGhostRace(record, ghostName: name, gameID: newID, for: identity, on: connection)
        }
    }

    private func startGhostRace(_ record: GameRecord, ghostName: String?, gameID: String, for identity: WebSocketConnection.Identity,
                                on connection: WebSocketConnection) {
        let now = MonotonicClock.now()
        let ghost: ReplaySession
        do {
            ghost = try ReplaySession(record: record, mode: .ghost, now: now)
        } catch {
            recorder.cancelStart(gameID: gameID, playerID: identity.playerID)
            return refuse(connection, ProtocolError(.notReplayable,
                "Game \(record.displayID) cannot be raced by this server: \(error).", inReplyTo: "raceGhost"))
        }
        let id = matches.nextID()
        // Both seats from the same moment: the player's steps and the ghost's fall together.
        let session = GameSession(
            id: id, gameID: gameID, playerID: identity.playerID, level: record.level, seed: record.seed, practice: true,
            graceLimitMilliseconds: limits.latencyGraceMilliseconds, startedAt: Date(), now: now)
        session.road = .ghost  // stored as a ghost race, as its running_games row already says
        let match = Match(id: id, kind: .ghost, seed: record.seed, startsAt: now, drivers: [session, ghost])
        let (playerSeat, ghostSeat) = (match.seats[0], match.seats[1])
        ghostSeat.playerName = ghostName
        match.onPlayerPaused = { [unowned ghost] _, paused in
            let now = MonotonicClock.now()
            if paused { ghost.pause(now: now) } else { ghost.play(now: now) }
        }
        match.onSeatEnded = { [unowned self, unowned match] seat, _ in
            // The player's game ended: the ghost has nobody to race.
            guard seat === match.seats[0] else { return }
            matches.discard(match)
            ghostRacesRunning -= 1
            logger.info("ghost race over", metadata: [
                "game.id": seat.driver.gameID, "game.ghost": match.seats[1].driver.gameID,
                "ghost.races.running": String(ghostRacesRunning)])
        }
        guard matches.add(match) else {
            recorder.cancelStart(gameID: gameID, playerID: identity.playerID)
            return refuse(connection, ProtocolError(.gameInProgress,
                "You have a game already: resume or quit it before racing a ghost.", inReplyTo: "raceGhost"))
        }
        ghostRacesRunning += 1
        matches.attach(playerSeat, of: match, to: connection)
        var snapshot = session.snapshot
        snapshot.ghost = ServerMessage.GhostOf(gameID: ghost.gameID, playerName: ghostName, score: record.score)
        connections.send(.started(snapshot, quota: nil), to: connection)
        matches.refreshIdleTimeout(connection)
        logger.info("ghost race started", metadata: ["game.id": gameID, "game.ghost": ghost.gameID, "game.level": record.level.rawValue])
    }

    private func refuse(_ connection: WebSocketConnection, _ error: ProtocolError) {
        connections.refuse(connection, error)
    }
}

/// What replays and ghost races ask of the running matches (`MatchHost`): a match of their own
/// added, found, woken and dropped, a player's seat found and attached. Service thread.
protocol ReplayedMatches: AnyObject {
    var shuttingDown: Bool { get }
    func nextID() -> Int
    func add(_ match: Match) -> Bool
    func discard(_ match: Match)
    func match(id: Int) -> Match?
    func reschedule(_ match: Match)
    func playerSeat(of playerID: Int64) -> MatchHost.PlayerSeat?
    func attach(_ seat: MatchSeat, of match: Match, to connection: WebSocketConnection)
    func refreshIdleTimeout(_ connection: WebSocketConnection)
}
