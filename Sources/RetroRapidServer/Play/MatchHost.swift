import Foundation
import RetroRapidLWS
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// The match registry: owns every running match: starting a solo one (one game per player,
/// one start in flight per player; `MatchHost+SoloStart.swift`), the one timer that steps them
/// all, delivering what each seat says to its receivers, handing each seat's game to the `GameRecorder` when it ends, their checkpoints
/// (`CheckpointWriter`), the watch on silent connections (`ConnectionWatchdog`), and ending
/// them all on shutdown.
///
/// A match is one or more seats (`Match`, `MatchSeat`); the host knows no kind of match but
/// by its shape. What the owners of other kinds (race rooms, replays) use, all on the
/// service thread:
/// - `nextID()` for a new match's id (and its sessions'), then `add(_:)`: the match is
///   scheduled at the earliest `wakeAt` of its seats (a race's sessions wake at its start
///   deadline) and each player seat counts as that player's one game. Refused (false, nothing
///   added) if one of its players has a game already.
/// - `attach(_:of:to:)` puts a connection on a player seat; `send(_:toAllOf:)` sends
///   match-wide messages (each encoded once) to every seat's player and watchers;
///   `deliver(_:of:seat:)` sends what a seat's driver said outside a tick (an answer to an
///   action) and ends the seat if it ended.
/// - `Match.onSeatEnded` hears a seat's game end (its record handed to the recorder, its
///   `gameOver` following from there), `Match.onEnded` the match end, once every seat is
///   over; after that the host has forgotten it.
///
/// Its siblings (watching, replays, the cluster hand-over), which the hub builds beside it, see
/// it through narrow protocols (`WatchedMatches`, `ReplayedMatches`, `HandedOverMatches`); it
/// sees them only as `MatchSeatWatchers` and `RemoteGames`, set by the hub.
///
/// Threading rule: owned by the `WebSocketHub` on the libwebsockets service thread; the step
/// timer fires from `lws_service` and the worker's completions come back through the mailbox,
/// both on that thread.
final class MatchHost: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    /// Alone or a cluster's node (`NodeRole`): asked here, never inferred from `remoteGames`.
    let role: NodeRole
    let limits: WebSocketLimits
    let connections: ConnectionRegistry
    let recorder: GameRecorder
    let checkpoints: CheckpointWriter
    let watchdog: ConnectionWatchdog
    /// The watchers of the seats here (`WatchHost`, a sibling the hub builds and sets): told
    /// when a seat ends, moves or loses its player, and asked to end a watch when its
    /// connection starts playing or goes.
    weak var seatWatchers: (any MatchSeatWatchers)?
    /// In cluster mode, where a game held by another node is fetched from (`GameHandoff`, a
    /// sibling the hub builds and sets); nil on a single node.
    weak var remoteGames: (any RemoteGames)?
    let worker: DatabaseWorker
    let metrics: WebSocketMetrics
    let logger: Logger
    /// Steps every match (ids: the matches'; below zero, `timers`'). It wakes at least every
    /// 50 ms, games or not (`TickScheduler.maximumSleep`: libev's timer cannot be moved
    /// earlier from a socket callback in libwebsockets 4.1.6).
    private let scheduler = TickScheduler(maximumSleepMicroseconds: 50_000)
    /// The other deadlines on the same timer, each registered by its owner (`ServiceTimers`).
    let timers: ServiceTimers
    /// How long the shutdown waits for clients to take their last messages and close.
    static let shutdownFlushMicroseconds: Int64 = 2_000_000

    private var matches: [Int: Match] = [:]

    /// Connections watching a seat of a match here now: for the operator's overview, a walk over
    /// every match (asked once a minute or on request, never per step).
    var watcherCount: Int {
        matches.values.reduce(0) { total, match in total + match.seats.reduce(0) { $0 + $1.watchers.count } }
    }
    /// The last step's messages, kept for their storage: each step writes its messages into
    /// this one array (one per host, not per game), so a step allocates none (`tick`).
    private var stepBuffer: [ServerMessage] = []
    /// A player plays at most one game at a time: the seat of the match it drives.
    private var matchByPlayer: [Int64: PlayerSeat] = [:]
    /// The running player seats by their game's public id (what `watch` names).
    private var seatByGameID: [String: MatchSeat.Address] = [:]
    /// Players whose `start` waits for the storage thread (one at a time, across devices). A
    /// shutdown waits for them too (`closeOnceStored`).
    private var startingPlayers: Set<Int64> = []
    /// Storage jobs other owners queued that a shutdown must see done before the worker closes
    /// (a race's record: `RoomHost`), counted by `beginStore` and `endStore`.
    private var storesInFlight = 0
    private var lastID = 0
    /// Set by `beginShutdown`: no new game starts or resumes.
    private(set) var shuttingDown = false
    private var shutdown: ShutdownProgress?

    /// Where a player's game is: its match and the seat it drives.
    struct PlayerSeat {
        let match: Match
        let seat: MatchSeat
        /// The player's game (a player seat always has one).
        var session: GameSession { seat.session! }
    }

    private struct ShutdownProgress {
        var completion: @Sendable (GameShutdownSummary) -> Void
        /// Saves done: the connections are being closed, and then `completion` runs.
        var closing = false
    }

    init(role: NodeRole, limits: WebSocketLimits, connections: ConnectionRegistry, recorder: GameRecorder,
         worker: DatabaseWorker, metrics: WebSocketMetrics, logger: Logger) {
        self.role = role
        self.limits = limits
        self.connections = connections
        self.worker = worker
        self.metrics = metrics
        self.logger = logger
        timers = ServiceTimers(scheduler: scheduler)
        self.recorder = recorder
        checkpoints = CheckpointWriter(limits: limits, worker: worker, metrics: metrics, logger: logger)
        watchdog = ConnectionWatchdog(limits: limits, connections: connections, metrics: metrics, logger: logger)
        scheduler.onDue = { [unowned self] id, now in self.timerDue(id, now: now) }
        timers.register(.shutdown) { [unowned self] _ in self.completeShutdown() }
        timers.register(.checkpoint) { [unowned self] now in
            // From the stop on (and after it completed) the shutdown stores every game whole: nothing
            // to keep, and the storage queues may already be closed.
            guard !self.shuttingDown else { return }
            self.timers.schedule(.checkpoint, at: now + self.checkpoints.sliceInterval)
            self.checkpoints.writeSlice(self.matches, now: now)
        }
        scheduler.afterDue = { [unowned self] in self.metrics.flush() }
        recorder.onAllSaved = { [unowned self] in self.closeOnceStored() }
        checkpoints.session = { [unowned self] address in self.matches[address.match]?.seat(at: address)?.session }
        watchdog.detachGame = { [unowned self] connection in self.detachGame(of: connection) }
    }

    /// LWS_CALLBACK_PROTOCOL_INIT: the vhost exists; the timers can be set.
    func attach(context: OpaquePointer) {
        scheduler.attach(context: context)
        watchdog.attach(context: context)
        timers.schedule(.checkpoint, at: MonotonicClock.now() + checkpoints.sliceInterval)
    }

    /// LWS_CALLBACK_PROTOCOL_DESTROY: the context is going; its timer lists with it.
    func detach() {
        scheduler.detach()
        watchdog.detach()
    }

    // MARK: - Looking games up

    /// The player's game that is not over yet, wherever it is (on a connection or waiting).
    func game(of playerID: Int64) -> GameSession? {
        guard let session = matchByPlayer[playerID]?.session, !session.isOver else { return nil }
        return session
    }

    /// The player's seat whose game is not over yet.
    func playerSeat(of playerID: Int64) -> PlayerSeat? {
        guard let placed = matchByPlayer[playerID], !placed.session.isOver else { return nil }
        return placed
    }

    /// The match with this id, while it runs.
    func match(id: Int) -> Match? { matches[id] }

    /// Whether a game is being started for the player (its play on the storage thread).
    func isStarting(_ playerID: Int64) -> Bool { startingPlayers.contains(playerID) }

    /// A race's play is being consumed for the player (`RoomHost`): no other start meanwhile,
    /// and a shutdown waits for it, as for `start`'s.
    func beginStart(_ playerID: Int64) { startingPlayers.insert(playerID) }
    func endStart(_ playerID: Int64) {
        startingPlayers.remove(playerID)
        if shuttingDown { closeOnceStored() }
    }

    /// Another owner has queued (or is about to queue) a storage job that must run before the
    /// worker closes: a shutdown waits for its `endStore` (`closeOnceStored`), as for a save.
    func beginStore() { storesInFlight += 1 }
    func endStore() {
        storesInFlight -= 1
        if shuttingDown { closeOnceStored() }
    }

    /// The running seat a player's game `gameID` drives, with its match.
    func runningSeat(gameID: String) -> (Match, MatchSeat)? {
        guard let address = seatByGameID[gameID], let match = matches[address.match], let seat = match.seat(at: address),
              !seat.driver.isOver else { return nil }
        return (match, seat)
    }

    /// The seat the connection plays, with its match, if any.
    private func playerSeat(of connection: WebSocketConnection) -> PlayerSeat? {
        guard let address = connection.seat, let match = matches[address.match], let seat = match.seat(at: address),
              seat.session != nil else { return nil }
        return PlayerSeat(match: match, seat: seat)
    }

    /// Whether a game on the connection is taking steps (or holding a crash): not paused, not over.
    /// A connection that watches a seat counts as running a game (`WatchHost`).
    private func hasRunningGame(_ connection: WebSocketConnection) -> Bool {
        connection.watching != nil || playerSeat(of: connection)?.seat.driver.wakeAt != nil
    }

    /// Starts or stops the connection's idle clock as its game runs or not. Call it after
    /// anything that may change that.
    func refreshIdleTimeout(_ connection: WebSocketConnection) {
        watchdog.refreshIdleTimeout(connection) { hasRunningGame(connection) }
    }

    // MARK: - Matches of other kinds (the owners of races, replays)

    /// A new id for a match or a session (positive, never reused while the server runs).
    func nextID() -> Int {
        lastID += 1
        return lastID
    }

    /// Runs `match` from now on: scheduled at the earliest `wakeAt` of its seats, each player
    /// seat its player's one game. False (and nothing added) when one of its players already
    /// has a game, or the server is stopping.
    @discardableResult
    func add(_ match: Match) -> Bool {
        guard !shuttingDown, matches[match.id] == nil else { return false }
        let players = match.seats.compactMap(\.playerID)
        guard Set(players).count == players.count, players.allSatisfy({ playerSeat(of: $0) == nil && !startingPlayers.contains($0) }) else {
            return false
        }
        register(match)
        return true
    }

    /// Makes `match` one of the host's: its player seats in `matchByPlayer`, its timer set.
    /// Counts `match` as running: its player seats as their players' one game each, and schedules it.
    func register(_ match: Match) {
        matches[match.id] = match
        for seat in match.seats {
            guard let playerID = seat.playerID else { continue }
            matchByPlayer[playerID] = PlayerSeat(match: match, seat: seat)
            seatByGameID[seat.driver.gameID] = seat.address
        }
        metrics.gamesRunning.set(Double(matchByPlayer.count))
        reschedule(match)
    }

    /// `connection` now plays `seat` of `match` (a seat a player's game drives): it gets the
    /// seat's messages and the match's. A watch on it ends first (`watchEnded`, `stopped`).
    func attach(_ seat: MatchSeat, of match: Match, to connection: WebSocketConnection) {
        if connection.watching != nil { seatWatchers?.stopWatching(on: connection) }
        if let name = connection.identity?.displayName { seat.playerName = name }
        seat.attachPlayer(connection)
        connection.seat = seat.address
        connection.lastEndedGameID = nil
        refreshIdleTimeout(connection)
    }

    /// Forgets a match nobody plays (a replay nobody watches any more, a ghost race whose
    /// player's game ended): its timer goes and nothing is stored; its seats say nothing more.
    func discard(_ match: Match) {
        guard matches[match.id] === match else { return }
        precondition(match.seats.allSatisfy { $0.session?.isOver ?? true }, "a match a player still plays is ended, not discarded")
        scheduler.cancel(match.id)
        matches[match.id] = nil
    }

    /// Sends match-wide messages (standings, a countdown, a ghost's position) to every seat's
    /// player and watchers, each message encoded once.
    func send(_ messages: [ServerMessage], toAllOf match: Match) {
        match.sendToAll(messages, through: connections)
    }

    // MARK: - move, pause, resume, quit

    /// Runs `action` on the connection's game and delivers what it produced, or the refusal.
    func withGame(of connection: WebSocketConnection, replyingTo type: String,
                  _ action: (GameSession) -> Result<GameSession.Output, ProtocolError>) {
        guard let placed = playerSeat(of: connection) else {
            if let ended = connection.lastEndedGameID {
                refuse(connection, ProtocolError(.gameOver, "Game \(ended) is over; start a new one.", inReplyTo: type))
            } else {
                refuse(connection, ProtocolError(.noGame, "No game is running on this connection; send start first.", inReplyTo: type))
            }
            return
        }
        switch action(placed.session) {
        case .success(let output):
            deliver(output, of: placed.match, seat: placed.seat)
        case .failure(let error):
            refuse(connection, error.replying(to: type))
        }
    }

    /// Resumes the connection's paused game, or takes back the player's game that waits after
    /// a dropped connection (or runs on another of their connections): a full snapshot first.
    func resume(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection, now: Int64) {
        if let placed = playerSeat(of: connection) {
            switch placed.session.resume(now: now) {
            case .success(let output): deliver(output, of: placed.match, seat: placed.seat)
            case .failure(let error): refuse(connection, error.replying(to: "resume"))
            }
            return
        }
        guard let placed = playerSeat(of: identity.playerID) else {
            // In a cluster the game may be held by another node, or left by a dead one: fetched here.
            if let remoteGames, !shuttingDown { return remoteGames.fetch(.resume, for: identity, on: connection) }
            return refuse(connection, ProtocolError(.noGame, "You have no game to resume; send start for a new one.", inReplyTo: "resume"))
        }
        if shuttingDown {
            return refuse(connection, ProtocolError(.shuttingDown, "The server is restarting; your game is being saved.", inReplyTo: "resume"))
        }
        resume(placed, on: connection, now: now)
    }

    /// Moves the player's game to `connection` and resumes it: `snapshot`, then `resumed`.
    func resume(_ placed: PlayerSeat, on connection: WebSocketConnection, now: Int64) {
        let session = placed.session
        takeOver(placed, on: connection)
        send(.snapshot(session.snapshot), to: connection)
        if case .paused = session.phase, case .success(let output) = session.resume(now: now) {
            deliver(output, of: placed.match, seat: placed.seat)
        } else {
            reschedule(placed.match)
        }
        seatWatchers?.tellCount(of: placed.seat, to: connection)
        logger.info("game resumed on a new connection", metadata: [
            "ws.connection.id": String(connection.id), "game.id": session.gameID])
    }

    /// Ends the connection's game, or the player's game that waits for them (or runs on
    /// another of their connections, which is told it no longer has it): saved as abandoned.
    func quit(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection, now: Int64) {
        if connection.seat == nil, let placed = playerSeat(of: identity.playerID) {
            takeOver(placed, on: connection)
        } else if connection.seat == nil, let remoteGames, !shuttingDown, connection.lastEndedGameID == nil {
            // In a cluster the game may be held by another node: fetched here, then ended.
            return remoteGames.fetch(.quit, for: identity, on: connection)
        }
        quitGame(on: connection, now: now)
    }

    /// Ends the connection's game as abandoned (or says it has none).
    func quitGame(on connection: WebSocketConnection, now: Int64) {
        withGame(of: connection, replyingTo: "quit") { session in .success(session.end(.abandoned, now: now)) }
    }

    /// Moves the player's game to `connection`; the connection that had it gets `detached`.
    func takeOver(_ placed: PlayerSeat, on connection: WebSocketConnection) {
        if let previous = placed.seat.player, previous !== connection {
            previous.seat = nil
            placed.seat.detachPlayer(previous)
            send(.detached(gameID: placed.session.gameID), to: previous)
            refreshIdleTimeout(previous)
        }
        placed.session.attach()
        attach(placed.seat, of: placed.match, to: connection)
    }

    // MARK: - Connections going away

    /// The connection's game, if it has one, waits paused for its player to come back (and
    /// ends as abandoned after the grace period): the connection dropped, or is being dropped.
    func detachGame(of connection: WebSocketConnection) {
        if connection.watching != nil { seatWatchers?.forget(connection) }
        guard let address = connection.seat else { return }
        connection.seat = nil
        guard let match = matches[address.match], let seat = match.seat(at: address), let session = seat.session else { return }
        seat.detachPlayer(connection)
        let now = MonotonicClock.now()
        let wasRunning = if case .running = session.phase { true } else { false }
        session.detach(now: now, deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
        if wasRunning {
            seatWatchers?.playerLeft(seat)
            match.onPlayerPaused?(seat, true)
        }
        reschedule(match)
        logger.info("game waits for its player", metadata: [
            "ws.connection.id": String(connection.id), "game.id": session.gameID,
            "game.grace.seconds": String(limits.disconnectGraceSeconds)])
    }

    /// LWS_CALLBACK_CLOSED, after the registry forgot the connection: the watchdog stops
    /// watching it and its game waits for the player.
    func connectionClosed(_ connection: WebSocketConnection) {
        watchdog.forget(connection)
        detachGame(of: connection)
    }

    // MARK: - Steps

    /// Sets the match's one timer entry to when it next needs a tick (or none).
    func reschedule(_ match: Match) {
        if let wake = match.wakeAt {
            scheduler.schedule(match.id, at: wake)
        } else {
            scheduler.cancel(match.id)
        }
    }

    /// The step timer says `id` is due.
    private func timerDue(_ id: Int, now: Int64) {
        if ServiceTimers.owns(id) { return timers.fire(id, now: now) }
        guard let match = matches[id] else { return }
        // The seats that are due, in seat order; the others wait for their own wakeAt.
        let seats = match.seats
        if seats.count == 1 {
            // A solo game, nearly every match: its seat without the loop's bookkeeping.
            tick(seats[0], of: match, now: now)
            return
        }
        for seat in seats { tick(seat, of: match, now: now) }
    }

    /// Ticks `seat` if it is due and delivers what it said.
    private func tick(_ seat: MatchSeat, of match: Match, now: Int64) {
        if let session = seat.session {
            // A player's game: reached directly, not through the driver's protocol.
            guard let wake = session.wakeAt, wake <= now else { return }
            let stepBefore = session.game.state.step
            // Taken out, so that the array is the step's alone and is emptied in place.
            let buffer = stepBuffer
            stepBuffer = []
            let output = session.tick(now: now, reusing: buffer)
            if session.game.state.step > stepBefore { metrics.stepTaken(lateMicroseconds: session.lastStepLateness) }
            deliver(output, of: match, seat: seat)
            // Kept for its storage: once `output` is gone this is its only reference again.
            stepBuffer = output.messages
            return
        }
        guard let wake = seat.driver.wakeAt, wake <= now else { return }
        deliver(seat.driver.tick(now: now), of: match, seat: seat)
    }

    /// Sends what a seat said to its receivers, then either ends the seat's game (it ended) or
    /// sets the match's next tick.
    func deliver(_ output: GameSession.Output, of match: Match, seat: MatchSeat) {
        // Taken before sending: a send that drops a slow reader detaches it from the seat.
        let connection = seat.player
        if seat.session == nil, match.seats.count > 1 {
            // A seat nobody plays beside seats players play (a ghost): match-wide.
            match.sendToAll(output.messages, through: connections)
        } else {
            seat.send(output.messages, through: connections)
        }
        if let reason = output.ended {
            finish(seat, of: match, reason: reason, connection: connection)
        } else {
            if let onPlayerPaused = match.onPlayerPaused, seat.session != nil,
               let paused = output.messages.lazy.compactMap(Self.pausing).last {
                onPlayerPaused(seat, paused)
            }
            reschedule(match)
            if let connection, output.messages.contains(where: Self.changesIdleness) { refreshIdleTimeout(connection) }
        }
    }

    /// True for `paused`, false for `resumed`, nil for anything else.
    private static func pausing(_ message: ServerMessage) -> Bool? {
        switch message {
        case .paused: true
        case .resumed: false
        default: nil
        }
    }

    /// Pausing starts the idle clock and resuming stops it; steps do not touch it.
    private static func changesIdleness(_ message: ServerMessage) -> Bool {
        switch message {
        case .paused, .resumed: true
        default: false
        }
    }

    /// A seat's game ended: the recorder saves it (a player's game; `gameOver` goes to the
    /// player's connection once the database has answered) and its player's connection no
    /// longer plays it. The last seat to end ends the match: the host forgets it.
    private func finish(_ seat: MatchSeat, of match: Match, reason: GameEndReason, connection: WebSocketConnection?) {
        let matchEnds = match.isOver
        if matchEnds {
            scheduler.cancel(match.id)
            matches[match.id] = nil
        } else {
            reschedule(match)
        }
        if let connection {
            connection.seat = nil
            connection.lastEndedGameID = seat.driver.gameID
            seat.detachPlayer(connection)
            refreshIdleTimeout(connection)
        }
        seatWatchers?.seatEnded(seat, of: match, reason: reason.rawValue)
        if let session = seat.session {
            if matchByPlayer[session.playerID]?.seat === seat { matchByPlayer[session.playerID] = nil }
            if seatByGameID[session.gameID] == seat.address { seatByGameID[session.gameID] = nil }
            metrics.gamesRunning.set(Double(matchByPlayer.count))
            metrics.gamesEnded.increment(reason.rawValue)
            recorder.save(session, replyingTo: connection?.id)
        }
        match.onSeatEnded?(seat, reason)
        if matchEnds { match.onEnded?() }
    }

    // MARK: - Games moving between nodes (cluster mode, `GameHandoff`)

    /// Makes a game rebuilt from its checkpoint (another node held it) one of this node's
    /// matches, paused and waiting for its player as after a dropped connection. Nil when the
    /// player already has a game here; a rebuilt game that had already crashed is stored as
    /// the crash it is (and nil).
    func adopt(gameID: String, playerID: Int64, playerName: String?, game: Game, practice: Bool, startedAt: Date,
               playedMilliseconds: Int, road: GameRoad = .random) -> PlayerSeat? {
        guard matchByPlayer[playerID].map({ $0.session.isOver }) ?? true else { return nil }
        let id = nextID()
        let now = MonotonicClock.now()
        let session = GameSession(
            id: id, gameID: gameID, playerID: playerID, resuming: game, practice: practice,
            graceLimitMilliseconds: limits.latencyGraceMilliseconds, startedAt: startedAt,
            playedMilliseconds: playedMilliseconds, now: now,
            deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
        session.road = road  // a daily game stays one on the node that takes it over
        let match = Match(id: id, seed: game.seed, session: session, startsAt: now)
        let placed = PlayerSeat(match: match, seat: match.seats[0])
        placed.seat.playerName = playerName
        register(match)
        if game.state.isOver {
            deliver(session.end(.crash, now: now), of: match, seat: placed.seat)
            return nil
        }
        logger.info("game taken over from its checkpoint", metadata: [
            "game.id": gameID, "game.steps": String(game.log.steps)])
        return placed
    }

    /// Lets go of the player's game `gameID` for another node: its connection, if any, is told
    /// the game moved (`detached`), it stops where it is and leaves this node's matches without
    /// being stored. Returns it with its whole log, for the checkpoint the other node rebuilds
    /// it from; nil when it is not here, is ending (a held crash: this node stores it), or is
    /// one seat of a match that cannot move whole (`Match.movableSeat`: a race stays put).
    func letGo(gameID: String, playerID: Int64) -> (placed: PlayerSeat, log: GameCheckpoint)? {
        guard let placed = matchByPlayer[playerID], placed.session.gameID == gameID, !placed.session.isOver,
              placed.match.movableSeat === placed.seat else { return nil }
        let session = placed.session
        if case .crashHeld = session.phase { return nil }
        let now = MonotonicClock.now()
        if let connection = placed.seat.player {
            connection.seat = nil
            placed.seat.detachPlayer(connection)
            send(.detached(gameID: gameID), to: connection)
            refreshIdleTimeout(connection)
        }
        session.detach(now: now, deadline: now + Int64(limits.disconnectGraceSeconds) * 1_000_000)
        guard let (log, _) = session.checkpoint(now: now, full: true) else { return nil }
        seatWatchers?.seatMoved(placed.seat)
        scheduler.cancel(placed.match.id)
        matches[placed.match.id] = nil
        matchByPlayer[playerID] = nil
        seatByGameID[gameID] = nil
        metrics.gamesRunning.set(Double(matchByPlayer.count))
        return (placed, log)
    }

    /// The ids of the games this node runs now (for the heartbeat's check of what it holds).
    var runningGameIDs: Set<String> {
        Set(matchByPlayer.values.lazy.filter { !$0.session.isOver }.map(\.session.gameID))
    }

    /// Drops a game another node took (this node's heartbeat had lapsed): its connection is told
    /// the game moved, and nothing is stored here; the other node has it now.
    func drop(gameID: String) {
        guard let placed = matchByPlayer.values.first(where: { $0.session.gameID == gameID }) else { return }
        _ = letGo(gameID: gameID, playerID: placed.session.playerID)
    }

    /// A game `letGo` gave up whose release could not be written: it stays here, waiting.
    func keep(_ placed: PlayerSeat) {
        guard matchByPlayer[placed.session.playerID] == nil else { return }
        register(placed.match)
    }

    // MARK: - Shutdown

    /// Ends every match as `reason`, has every game saved and every start answered meanwhile
    /// cancelled, then closes every connection (1001) and calls `completion` with what was
    /// saved. From then on no game starts.
    func beginShutdown(reason: GameEndReason, completion: @escaping @Sendable (GameShutdownSummary) -> Void) {
        guard shutdown == nil else {
            // Asked twice: the second caller hears when the first shutdown is done.
            let first = shutdown!.completion
            shutdown!.completion = { summary in first(summary); completion(summary) }
            return
        }
        shuttingDown = true
        shutdown = ShutdownProgress(completion: completion)
        recorder.startCounting()
        let now = MonotonicClock.now()
        for match in Array(matches.values).sorted(by: { $0.id < $1.id }) {
            for seat in match.seats {
                guard let session = seat.session, !session.isOver else { continue }
                deliver(session.end(reason, now: now), of: match, seat: seat)
            }
        }
        logger.notice("ending every game for shutdown", metadata: [
            "games.saving": String(recorder.savesInFlight), "games.starting": String(startingPlayers.count),
            "stores.other": String(storesInFlight)])
        closeOnceStored()
        metrics.flush()
    }

    /// Closes every connection once no save is in flight, no start waits for its storage
    /// thread and no other owner's store is under way (`beginStore`: a race's record, queued
    /// once its racers' games are saved). A start answered during the shutdown queues its cancel (`startAnswered`) before
    /// this lets `GameServer.stop` close the worker, which runs every job already queued; so
    /// the start's `running_games` row goes and its play comes back. With several storage
    /// threads a start can be answered after every save is done (its lane had none of them
    /// behind it); with one thread, when no game was saved at all.
    private func closeOnceStored() {
        guard recorder.savesInFlight == 0, startingPlayers.isEmpty, storesInFlight == 0 else { return }
        closeEveryConnection()
    }

    /// Every game is saved: say goodbye (1001) after what is queued, and finish when the
    /// clients have gone or the flush time is up.
    private func closeEveryConnection() {
        guard var progress = shutdown, !progress.closing else { return }
        progress.closing = true
        shutdown = progress
        for connection in connections.all {
            connection.close(.init(code: ProtocolError.Close.goingAway, reason: "server restarting; games were saved"))
        }
        if connections.isEmpty {
            completeShutdown()
        } else {
            timers.schedule(.shutdown, at: MonotonicClock.now() + Self.shutdownFlushMicroseconds)
        }
    }

    /// A connection closed: the shutdown may have been waiting for the last one.
    func connectionsMayHaveEmptied() {
        if shutdown?.closing == true && connections.isEmpty { completeShutdown() }
    }

    private func completeShutdown() {
        guard let progress = shutdown, progress.closing else { return }
        shutdown = nil
        timers.cancel(.shutdown)
        progress.completion(recorder.finishCounting())
    }

    // MARK: -

    func send(_ message: ServerMessage, to connection: WebSocketConnection) {
        connections.send(message, to: connection)
    }

    func refuse(_ connection: WebSocketConnection, _ error: ProtocolError) {
        connections.refuse(connection, error)
    }
}

/// What the siblings the hub builds beside the host ask of it, each through its own narrow view.
extension MatchHost: WatchedMatches, ReplayedMatches, HandedOverMatches {}

/// What the match registry tells the watchers of its seats (`WatchHost`), and asks of them when
/// a connection that watches starts playing or goes. Service thread.
protocol MatchSeatWatchers: AnyObject {
    /// The seat's game ended (`watchEnded` to its watchers).
    func seatEnded(_ seat: MatchSeat, of match: Match, reason: String)
    /// The seat's game left this node (another node took it over).
    func seatMoved(_ seat: MatchSeat)
    /// The seat's player dropped: the game waits for them.
    func playerLeft(_ seat: MatchSeat)
    /// Tells a player who takes their game back how many watch it.
    func tellCount(of seat: MatchSeat, to connection: WebSocketConnection)
    /// The connection starts playing: its watch ends (`watchEnded`, `stopped`).
    func stopWatching(on connection: WebSocketConnection)
    /// The connection went: its watch ends without a word to it.
    func forget(_ connection: WebSocketConnection)
}

/// Where the match registry fetches a player's game that another node holds (cluster mode,
/// `GameHandoff`). Service thread.
protocol RemoteGames: AnyObject {
    func fetch(_ purpose: GameHandoff.Purpose, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection)
}
