import Foundation
import RetroRapidDomain
import RetroRapidLWS
import RetroRapidSupport

/// Watching (docs/PROTOCOL.md, "Watching"): a signed-in connection that plays nothing watches
/// one seat of a running match, read-only. It gets `watching` (whose game, its picture, how
/// many watch), then exactly the frames the seat's player gets, the same bytes (a watcher is
/// one more receiver of the seat, `MatchSeat.send`), and `watchEnded` when the game or the
/// watch ends. The player, and every racer of the match, hear how many watch (`watchers`), at
/// most once a second.
///
/// Where a game is found: running here by its id (`MatchHost.runningSeat`); a race room's seat
/// through `roomSeat`, which the rooms' owner fills; otherwise the database says whether it
/// ended (`game_over`), runs on another node (`watch_elsewhere`, cluster mode), or never was
/// (`game_not_found`). Games that ended here lately are remembered, so a watch that comes while
/// the record is still on its way is `game_over` too.
///
/// A race is watched to its finish: when the racer a watcher follows ends, the watcher gets
/// `watchEnded` for that game but stays on the race (its `standings`, `raceOver` and `room`
/// still reach it through the seat) and may `watch` another racer of it; the race's owner lets
/// its watchers go once the race is over (`raceEnded`).
///
/// What "idle" means for a watcher: a connection watching a seat is never idle (like a player
/// listening to steps, it may say nothing for a long time); the keepalive still finds a dead
/// peer and the queue a client that stops reading, and the watch ends with the game.
///
/// Threading rule: owned by the `WebSocketHub` on the libwebsockets service thread; the match
/// registry's step timer calls `tick` (its own `ServiceTimers.Timer.watchers`) and the worker's completions come
/// back through the mailbox, both on that thread.
final class WatchHost: MatchSeatWatchers, @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    /// Least time between two `watchers` counts for one seat.
    static let countIntervalMicroseconds: Int64 = 1_000_000
    /// How many ended games' ids are remembered for `game_over`.
    static let rememberedEndings = 4096

    let limits: WebSocketLimits
    let connections: ConnectionRegistry
    let worker: DatabaseWorker
    let logger: Logger
    /// Alone or a cluster's node: a game not here may run on another (`watch_elsewhere`).
    let role: NodeRole
    /// The running matches (`MatchHost`, a sibling the hub builds).
    unowned let matches: any WatchedMatches

    /// The match and seat a race room's code (and seat, nil: the first racer) names, or the
    /// refusal to send (its `inReplyTo` is filled here); set by the owner of race rooms. The
    /// match must be one the host runs (`MatchHost.add`). Until it is set no room is known.
    var roomSeat: (_ code: String, _ seat: Int?) -> Result<(match: Match, seat: Int), ProtocolError> = { code, _ in
        .failure(ProtocolError(.gameNotFound, "No race room has the code \(code.prefix(16))."))
    }
    /// Its own timer (`ServiceTimers.Timer.watchers`): `tick` when the counts waiting are due.
    private let timers: ServiceTimers
    /// A watcher left a seat (stopped, switched, or its connection went): a replay nobody
    /// watches any more is dropped (`ReplayHost`).
    var watcherLeft: (Match, MatchSeat) -> Void = { _, _ in }

    /// The last count each watched seat's players were told, and whether a newer one waits.
    private var counts: [MatchSeat.Address: Count] = [:]
    private struct Count {
        var sent: Int
        var sentAt: Int64
        var pending: Bool
    }
    /// Ids of games that ended here lately, oldest first (`ended` holds the same ids).
    private var endedOrder: [String] = []
    private var ended: Set<String> = []
    /// Race matches with a seat whose game ended, by id, until the race is over (`raceEnded`):
    /// the host forgets a match once every seat is over, but its watchers follow it to its
    /// `raceOver`, which comes after the saves.
    private var races: [Int: Match] = [:]

    init(role: NodeRole, limits: WebSocketLimits, connections: ConnectionRegistry, worker: DatabaseWorker, timers: ServiceTimers,
         logger: Logger, matches: any WatchedMatches) {
        self.role = role
        self.limits = limits
        self.connections = connections
        self.worker = worker
        self.timers = timers
        self.logger = logger
        self.matches = matches
        timers.register(.watchers) { [unowned self] now in self.tick(now: now) }
    }

    // MARK: - watch, stopWatching

    func watch(_ target: ClientMessage.WatchTarget, for identity: WebSocketConnection.Identity,
               on connection: WebSocketConnection) {
        if let address = connection.seat {
            let gameID = matches.match(id: address.match)?.seat(at: address)?.driver.gameID ?? "?"
            return refuse(connection, ProtocolError(.gameInProgress,
                "This connection plays game \(gameID); a connection plays or watches, not both. Watch from another tab or device.",
                inReplyTo: "watch"))
        }
        guard limits.watchersPerGame > 0 else {
            return refuse(connection, ProtocolError(.watchersFull, "Watching is turned off on this server.", inReplyTo: "watch"))
        }
        switch target {
        case .game(let gameID):
            if let (match, seat) = matches.runningSeat(gameID: gameID) {
                return watch(seat, of: match, room: match.roomCode, on: connection)
            }
            if ended.contains(gameID) { return refuse(connection, Self.over(gameID)) }
            lookUp(gameID, for: identity, on: connection)
        case .room(let code, let seat):
            switch roomSeat(code, seat) {
            case .success(let (match, index)):
                guard matches.match(id: match.id) === match, match.seats.indices.contains(index) else {
                    return refuse(connection, ProtocolError(.gameNotFound, "Room \(code) has no racer in seat \(index).", inReplyTo: "watch"))
                }
                watch(match.seats[index], of: match, room: code, on: connection)
            case .failure(let error):
                refuse(connection, error.replying(to: "watch"))
            }
        }
    }

    /// Ends the connection's watch: `watchEnded` with reason `stopped`.
    func stopWatching(on connection: WebSocketConnection) {
        guard let (match, seat) = watched(by: connection) else {
            connection.watching = nil
            return refuse(connection, ProtocolError(.notWatching, "This connection watches no game.", inReplyTo: "stopWatching"))
        }
        leave(seat, of: match, connection)
        connections.send(.watchEnded(gameID: seat.driver.gameID, reason: "stopped", score: seat.driver.snapshot.score), to: connection)
        matches.refreshIdleTimeout(connection)
    }

    /// The connection closed or is being dropped: it watches nothing any more, silently.
    func forget(_ connection: WebSocketConnection) {
        guard let (match, seat) = watched(by: connection) else {
            connection.watching = nil
            return
        }
        leave(seat, of: match, connection)
    }

    /// Puts `connection` on `seat` as a watcher (switching from any seat it watched) and says
    /// `watching`; watching the same seat again sends a fresh `watching`.
    private func watch(_ seat: MatchSeat, of match: Match, room: String?, on connection: WebSocketConnection) {
        if seat.driver.isOver { return refuse(connection, Self.over(seat.driver.gameID)) }
        if connection.watching != seat.address {
            guard seat.watchers.count < limits.watchersPerGame else {
                return refuse(connection, ProtocolError(.watchersFull,
                    "Game \(seat.driver.gameID) has \(limits.watchersPerGame) watchers, the most allowed; try again later.",
                    inReplyTo: "watch"))
            }
            if let (previousMatch, previous) = watched(by: connection) { leave(previous, of: previousMatch, connection) }
            seat.addWatcher(connection)
            connection.watching = seat.address
            countChanged(seat, of: match)
        }
        connections.send(.watching(ServerMessage.Watching(
            playerName: seat.playerName, room: room, game: seat.driver.snapshot, watchers: seat.watchers.count)), to: connection)
        matches.refreshIdleTimeout(connection)
        logger.info("watching a game", metadata: [
            "ws.connection.id": String(connection.id), "game.id": seat.driver.gameID, "game.watchers": String(seat.watchers.count)])
    }

    private func leave(_ seat: MatchSeat, of match: Match, _ connection: WebSocketConnection) {
        seat.removeWatcher(connection)
        connection.watching = nil
        countChanged(seat, of: match)
        watcherLeft(match, seat)
    }

    /// The seat the connection watches, with its match, while it runs (a race: until it is over).
    private func watched(by connection: WebSocketConnection) -> (Match, MatchSeat)? {
        guard let address = connection.watching, let match = matches.match(id: address.match) ?? races[address.match],
              let seat = match.seat(at: address) else { return nil }
        return (match, seat)
    }

    // MARK: - Games not running here

    private enum Lookup: Sendable {
        case notFound, over, elsewhere(node: String)
    }

    /// Asks the database about a game that does not run here.
    private func lookUp(_ gameID: String, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let (nodeID, lease) = (role.nodeID, role.lease)
        let connectionID = connection.id
        worker.perform(orderedBy: identity.playerID, { storage -> Lookup in
            if let nodeID, let holder = try storage.cluster.holder(gameID: gameID, now: storage.now, lease: lease),
               holder.nodeID != nodeID, holder.nodeAlive, !holder.released {
                return .elsewhere(node: holder.nodeID)
            }
            if try storage.games.game(publicID: gameID) != nil { return .over }
            return .notFound
        }, then: { [self] result in
            guard let connection = connections[connectionID], connection.closing == nil else { return }
            // Meanwhile the game may have come here (or this connection started playing).
            if connection.seat != nil || matches.runningSeat(gameID: gameID) != nil || ended.contains(gameID) {
                guard let identity = connection.identity else { return }
                return watch(.game(gameID), for: identity, on: connection)
            }
            switch result {
            case .success(.elsewhere(let node)):
                var error = ProtocolError(.watchElsewhere,
                    "Game \(gameID) runs on node \(node): reconnect to /ws?node=\(node) and watch it there.", inReplyTo: "watch")
                error.node = node
                refuse(connection, error)
            case .success(.over):
                refuse(connection, Self.over(gameID))
            case .success(.notFound):
                refuse(connection, ProtocolError(.gameNotFound, "No running game has the id \(gameID.prefix(64)).", inReplyTo: "watch"))
            case .failure(let error):
                logger.error("could not look a watched game up", metadata: ["game.id": String(gameID.prefix(64)), "error": "\(error)"])
                refuse(connection, ProtocolError(.unavailable, "The game could not be looked up just now; try again.", inReplyTo: "watch"))
            }
        })
    }

    private static func over(_ gameID: String) -> ProtocolError {
        ProtocolError(.gameOver, "Game \(gameID) has ended; its replay can be watched.", inReplyTo: "watch")
    }

    // MARK: - What the host tells

    /// The seat's game ended: each watcher gets `watchEnded` with the game's reason and score.
    /// A race's watchers stay on the race (see above); any other watch ends.
    func seatEnded(_ seat: MatchSeat, of match: Match, reason: String) {
        if match.kind == .race {
            races[match.id] = match
            counts[seat.address] = nil
            if !seat.watchers.isEmpty {
                connections.send(.watchEnded(gameID: seat.driver.gameID, reason: reason, score: seat.driver.snapshot.score),
                                 to: seat.watchers)
            }
        } else {
            endWatches(of: seat, reason: reason)
        }
        remember(seat.driver.gameID)
    }

    /// The race of `match` is over (its `raceOver` sent) or its room closed: its watchers watch
    /// nothing any more, silently (each had its `watchEnded`). Returns them, for the race's
    /// last words (`room`, or `roomLeft`).
    @discardableResult
    func raceEnded(_ match: Match) -> [WebSocketConnection] {
        races[match.id] = nil
        var released: [WebSocketConnection] = []
        for seat in match.seats {
            counts[seat.address] = nil
            for watcher in seat.removeAllWatchers() where watcher.watching == seat.address {
                watcher.watching = nil
                matches.refreshIdleTimeout(watcher)
                released.append(watcher)
            }
        }
        return released
    }

    /// The seat's game left this node (cluster mode): each watcher gets `watchEnded`, `moved`;
    /// a `watch` again finds where it went.
    func seatMoved(_ seat: MatchSeat) {
        endWatches(of: seat, reason: "moved")
    }

    /// The seat's player dropped while the game ran: its watchers see it pause (the player,
    /// gone, hears nothing).
    func playerLeft(_ seat: MatchSeat) {
        guard !seat.watchers.isEmpty else { return }
        seat.send([.paused(reason: .disconnected)], through: connections)
    }

    /// Tells a player who came back to their seat how many watch it, if any do.
    func tellCount(of seat: MatchSeat, to connection: WebSocketConnection) {
        guard !seat.watchers.isEmpty else { return }
        connections.send(.watchers(gameID: seat.driver.gameID, count: seat.watchers.count), to: connection)
    }

    private func endWatches(of seat: MatchSeat, reason: String) {
        counts[seat.address] = nil
        let watchers = seat.removeAllWatchers()
        guard !watchers.isEmpty else { return }
        for watcher in watchers { watcher.watching = nil }
        connections.send(.watchEnded(gameID: seat.driver.gameID, reason: reason, score: seat.driver.snapshot.score), to: watchers)
        for watcher in watchers { matches.refreshIdleTimeout(watcher) }
    }

    private func remember(_ gameID: String) {
        guard ended.insert(gameID).inserted else { return }
        endedOrder.append(gameID)
        if endedOrder.count > Self.rememberedEndings {
            let drop = endedOrder.count - Self.rememberedEndings / 2
            for id in endedOrder.prefix(drop) { ended.remove(id) }
            endedOrder.removeFirst(drop)
        }
    }

    // MARK: - The count, at most once a second

    /// The seat's count of watchers changed: its players hear it now, or once a second has
    /// passed since they last did.
    private func countChanged(_ seat: MatchSeat, of match: Match) {
        let now = MonotonicClock.now()
        let count = seat.watchers.count
        var state = counts[seat.address] ?? Count(sent: 0, sentAt: now - Self.countIntervalMicroseconds, pending: false)
        if count == state.sent {
            state.pending = false
        } else if now - state.sentAt >= Self.countIntervalMicroseconds {
            tellPlayers(of: match, seat, count)
            state = Count(sent: count, sentAt: now, pending: false)
        } else if !state.pending {
            state.pending = true
            timers.schedule(.watchers, at: state.sentAt + Self.countIntervalMicroseconds)
        }
        counts[seat.address] = state.sent == 0 && !state.pending && count == 0 ? nil : state
    }

    /// The host's timer: the counts that waited for their second.
    func tick(now: Int64) {
        var next: Int64?
        for (address, state) in counts where state.pending {
            let due = state.sentAt + Self.countIntervalMicroseconds
            guard now >= due else {
                next = min(next ?? due, due)
                continue
            }
            guard let match = matches.match(id: address.match), let seat = match.seat(at: address) else {
                counts[address] = nil
                continue
            }
            let count = seat.watchers.count
            if count != state.sent { tellPlayers(of: match, seat, count) }
            counts[address] = count == 0 ? nil : Count(sent: count, sentAt: now, pending: false)
        }
        if let next { timers.schedule(.watchers, at: next) }
    }

    /// `watchers` for `seat` to every player of its match (the one player of a solo game).
    private func tellPlayers(of match: Match, _ seat: MatchSeat, _ count: Int) {
        let players = match.seats.compactMap(\.player)
        connections.send(.watchers(gameID: seat.driver.gameID, count: count), to: players)
    }

    private func refuse(_ connection: WebSocketConnection, _ error: ProtocolError) {
        connections.refuse(connection, error)
    }
}

/// What watching asks of the running matches (`MatchHost`): finding a seat, and the idle clock
/// of a connection that starts or stops watching. Service thread.
protocol WatchedMatches: AnyObject {
    func match(id: Int) -> Match?
    func runningSeat(gameID: String) -> (Match, MatchSeat)?
    func refreshIdleTimeout(_ connection: WebSocketConnection)
}
