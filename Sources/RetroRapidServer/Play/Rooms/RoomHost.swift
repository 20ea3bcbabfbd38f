import Foundation
import RetroRapidLWS
import RetroRapidRules
import RetroRapidDomain
import RetroRapidSupport

/// The race rooms' one owner: the lobby messages (`openRoom`, `joinRoom`, `ready`,
/// `startRace`, `leaveRoom`), the quick-race queue (`quickRace`, `leaveQueue`), and each race
/// from its start (a play consumed per racer) through its countdown, standings and time limit
/// to its results (`raceOver`) and the rematch lobby. A room is not a match: it asks the
/// `MatchHost` for one game per racer on one seed, all starting at one deadline, and hears
/// each end through `MatchHost.onMatchFinished`.
///
/// In parts, one file each: this one (its state, the lobby messages, connections, the shared
/// parts), `RoomHost+RaceStart.swift`, `RoomHost+RaceRun.swift`, `RoomHost+QuickRace.swift` and
/// `RoomHost+Cluster.swift`.
///
/// Threading rule: owned by the `WebSocketHub` next to the `MatchHost`, on the libwebsockets
/// service thread; its timer fires from `lws_service` and the worker's completions come back
/// through the mailbox, both on that thread.
final class RoomHost: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    // What the parts in RoomHost+*.swift use is internal, not private; the rest stays private.
    let configuration: ServerConfiguration
    let connections: ConnectionRegistry
    let matchHost: MatchHost
    /// Watching a room's racers (`watch` with a room code), and letting a race's watchers go.
    let watching: WatchHost
    let worker: DatabaseWorker
    let logger: Logger
    let registry: RoomRegistry
    // Settable: the quick-race part (RoomHost+QuickRace.swift) joins and leaves it.
    var queue: QuickRaceQueue
    /// One timer entry per room (its `timerID`) and one for the queue.
    let scheduler = TickScheduler(maximumSleepMicroseconds: 50_000)
    static let queueTimerID = -1

    /// The connection each racer hears their room on (the one that opened, joined or resumed).
    var roomConnection: [Int64: Int] = [:]
    /// The connection each queued player waits on.
    var queueConnection: [Int64: Int] = [:]
    /// What each room is doing beyond its lobby state: its timer id, the race running, the
    /// lobby racers whose connection dropped.
    var runs: [RoomCode: RoomRun] = [:]
    private var runByTimer: [Int: RoomCode] = [:]
    /// The room whose race each race match is, by match id.
    var raceByMatch: [Int: RoomCode] = [:]
    private var lastTimerID = 0
    var lastRaceKey = 0
    /// Races (by `Race.key`) from their last game's end until their record is answered: each
    /// holds a shutdown back (`MatchHost.beginStore`), so the worker closes only after it.
    var racesHoldingShutdown: Set<Int> = []
    /// Races whose plays are being consumed, by room.
    var starts: [RoomCode: StartProgress] = [:]

    /// A start waiting for its racers' plays.
    final class StartProgress {
        let racers: [RaceRoom.Racer]
        let gameIDs: [Int64: String]
        let seed: UInt64
        var pending: Int
        var quotas: [Int64: QuotaStatus?] = [:]
        var failed: [(RaceRoom.Racer, ProtocolError, QuotaStatus?)] = []
        init(racers: [RaceRoom.Racer], gameIDs: [Int64: String], seed: UInt64) {
            self.racers = racers
            self.gameIDs = gameIDs
            self.seed = seed
            pending = racers.count
        }
    }

    /// A room's timer and, while one runs, its race.
    final class RoomRun {
        let timerID: Int
        var race: Race?
        /// Lobby racers whose connection dropped: their seat goes at this deadline.
        var dropDeadlines: [Int64: Int64] = [:]
        init(timerID: Int) { self.timerID = timerID }
    }

    /// One race: its racers' games, when it starts and ends, its standings.
    final class Race {
        struct Entrant {
            let seat: Int
            let playerID: Int64
            let name: String
            let gameID: String
            /// The racer's place in `Match.seats`.
            let seatIndex: Int
            /// Set when their game ends: the reason stored in the race.
            var result: String?
            var score = 0
            var steps = 0
        }

        /// Unique while the server runs: how a storage job's completion names the race.
        let key: Int
        let seed: UInt64
        let startsAt: Int64
        let endsAt: Int64
        let startedAt: Date
        /// The one match of every racer's game (a seat each), while it runs.
        var match: Match?
        var entrants: [Entrant]
        var standings: RaceStandings
        var started = false
        /// Racers' saves not yet known to be done (`afterSaves`).
        var savesPending = 0
        init(key: Int, seed: UInt64, startsAt: Int64, endsAt: Int64, entrants: [Entrant], standings: RaceStandings) {
            self.key = key
            self.seed = seed
            self.startsAt = startsAt
            self.endsAt = endsAt
            // Wall-clock time of the start deadline, for the stored race.
            startedAt = Date().addingTimeInterval(Double(startsAt - MonotonicClock.now()) / 1_000_000)
            self.entrants = entrants
            self.standings = standings
        }
        var isOver: Bool { entrants.allSatisfy { $0.result != nil } }
    }

    init(configuration: ServerConfiguration, connections: ConnectionRegistry, matchHost: MatchHost, watching: WatchHost,
         worker: DatabaseWorker, logger: Logger, random: @escaping () -> UInt64 = { UInt64.random(in: .min ... .max) }) {
        self.configuration = configuration
        self.connections = connections
        self.matchHost = matchHost
        self.watching = watching
        self.worker = worker
        self.logger = logger
        registry = RoomRegistry(maxRooms: configuration.maxRooms, random: random)
        queue = QuickRaceQueue(waitMicroseconds: Int64(configuration.quickRaceWaitSeconds) * 1_000_000)
        scheduler.onDue = { [unowned self] id, now in self.timerDue(id, now: now) }
        watching.roomSeat = { [unowned self] code, seat in self.watchedSeat(code: code, seat: seat) }
    }

    /// LWS_CALLBACK_PROTOCOL_INIT / DESTROY (through the hub).
    func attach(context: OpaquePointer) { scheduler.attach(context: context) }
    func detach() { scheduler.detach() }

    var countdownMicroseconds: Int64 { Int64(configuration.raceCountdownSeconds) * 1_000_000 }
    var graceMicroseconds: Int64 { Int64(configuration.disconnectGraceSeconds) * 1_000_000 }

    // MARK: - Lobby messages

    func openRoom(level: SpeedLevel, seats: Int, practice: Bool, for identity: WebSocketConnection.Identity,
                  on connection: WebSocketConnection) {
        let type = "openRoom"
        if let refusal = refusalToEnter(identity, type: type) { return refuse(connection, refusal) }
        do throws(RoomRefusal) {
            let room = try registry.open(level: level, seats: seats, practice: practice, quick: false,
                                         hostID: identity.playerID, hostName: identity.displayName)
            opened(room)
            roomConnection[identity.playerID] = connection.id
            logger.info("room opened", metadata: ["room.code": room.code.text, "game.level": level.rawValue,
                                                   "room.seats": String(seats), "game.practice": String(practice)])
            place(room, attempts: 3)
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: type))
        }
    }

    func joinRoom(code typed: String, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = "joinRoom"
        let playerID = identity.playerID
        // A racer coming back on a new connection (theirs dropped) takes their seat again.
        if let room = registry.room(of: playerID), RoomCode(reading: typed) == room.code,
           roomConnection[playerID].flatMap({ connections[$0] }) == nil || room.racer(playerID)?.connected == false {
            rebind(room, playerID: playerID, to: connection)
            return sendRoom(room)
        }
        if matchHost.shuttingDown { return refuse(connection, shuttingDownError(type)) }
        if let refusal = refusalToEnter(identity, type: type, checkRoom: false) { return refuse(connection, refusal) }
        // In a cluster a code not open here may be another node's room.
        if let code = RoomCode(reading: typed), registry.room(code) == nil, nodeID != nil, registry.room(of: playerID) == nil {
            let connectionID = connection.id
            return lookUpPlace(code) { [self] node in
                guard let connection = connections[connectionID] else { return }
                var refusal = RoomRefusal.roomNotFound(typed).error(inReplyTo: type)
                if let node {
                    refusal = ProtocolError(.roomElsewhere, "Room \(code) is on server \(node): connect to it and join again.",
                                            inReplyTo: type)
                    refusal.node = node
                }
                refuse(connection, refusal)
            }
        }
        do throws(RoomRefusal) {
            let (room, seat) = try registry.join(typed: typed, playerID: playerID, name: identity.displayName)
            roomConnection[playerID] = connection.id
            logger.info("room joined", metadata: ["room.code": room.code.text, "room.seat": String(seat)])
            sendRoom(room)
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: type))
        }
    }

    func ready(_ ready: Bool, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        guard let room = registry.room(of: identity.playerID) else {
            return refuse(connection, RoomRefusal.notInRoom.error(inReplyTo: "ready"))
        }
        do throws(RoomRefusal) {
            try room.setReady(playerID: identity.playerID, ready)
            rebind(room, playerID: identity.playerID, to: connection)
            sendRoom(room)
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: "ready"))
        }
    }

    func leaveRoom(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        guard registry.room(of: identity.playerID) != nil else {
            return refuse(connection, RoomRefusal.notInRoom.error(inReplyTo: "leaveRoom"))
        }
        leave(identity.playerID, answering: connection)
    }

    /// Takes the player out of their room: `roomLeft` to them (on `connection`, else their room
    /// connection), `room` to the rest; a race they were in ends their game as `quit` does.
    func leave(_ playerID: Int64, answering connection: WebSocketConnection?, reason: RoomLeftReason = .left) {
        guard let (room, departure, closed) = try? registry.leave(playerID: playerID) else { return }
        let receiver = connection ?? roomConnection[playerID].flatMap { connections[$0] }
        roomConnection[playerID] = nil
        runs[room.code]?.dropDeadlines[playerID] = nil
        if let receiver { connections.send(.roomLeft(code: room.code, reason: reason), to: receiver) }
        if departure.wasRacing, let race = runs[room.code]?.race,
           let entrant = race.entrants.first(where: { $0.playerID == playerID }), entrant.result == nil {
            race.standings.setState(seat: entrant.seat, .left)
            if let match = race.match, let session = match.seats[entrant.seatIndex].session {
                matchHost.deliver(session.end(.abandoned, now: MonotonicClock.now()), of: match, seat: match.seats[entrant.seatIndex])
            }
        }
        logger.info("room left", metadata: ["room.code": room.code.text, "room.seat": String(departure.seat)])
        if closed {
            closedRoom(room)
        } else {
            sendRoom(room)
        }
    }


    // MARK: - Connections

    /// The connection closed: a lobby racer keeps their seat for the disconnect grace, a
    /// queued player leaves the queue. (A racer's game waits through `MatchHost` as any.)
    func connectionClosed(_ connection: WebSocketConnection) {
        guard let playerID = connection.identity?.playerID else { return }
        if queueConnection[playerID] == connection.id, let level = try? queue.leave(playerID: playerID) {
            queueConnection[playerID] = nil
            sendQueue(level)
            rescheduleQueue()
        }
        guard roomConnection[playerID] == connection.id, let room = registry.room(of: playerID) else { return }
        roomConnection[playerID] = nil
        room.setConnected(playerID: playerID, false)
        if room.state == .lobby { run(of: room).dropDeadlines[playerID] = MonotonicClock.now() + graceMicroseconds }
        sendRoom(room)
        reschedule(room)
    }

    /// The player took their race game back on `connection` (`resume`): their room follows.
    func resumed(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        guard let room = registry.room(of: identity.playerID), connection.seat != nil else { return }
        rebind(room, playerID: identity.playerID, to: connection)
        sendRoom(room)
    }

    func rebind(_ room: RaceRoom, playerID: Int64, to connection: WebSocketConnection) {
        roomConnection[playerID] = connection.id
        runs[room.code]?.dropDeadlines[playerID] = nil
        room.setConnected(playerID: playerID, true)
    }

    // MARK: - Looking rooms up

    /// `GET /api/v1/rooms/{code}`: the room as anyone may see it.
    func publicView(_ typed: String) -> RoomView? {
        guard let code = RoomCode(reading: typed), let room = registry.room(code) else { return nil }
        return RoomView(room, you: nil, watchers: watcherCount(room))
    }

    // MARK: - Parts

    /// Why the player may not open, join or queue now: a game of theirs, a room, the queue.
    func refusalToEnter(_ identity: WebSocketConnection.Identity, type: String, checkRoom: Bool = true) -> ProtocolError? {
        if matchHost.shuttingDown { return shuttingDownError(type) }
        if let game = matchHost.game(of: identity.playerID) {
            return ProtocolError(.gameInProgress,
                "Game \(game.gameID) is yours and not over: finish or quit it first.", inReplyTo: type)
        }
        if matchHost.isStarting(identity.playerID) {
            return ProtocolError(.gameInProgress, "A game is starting for you.", inReplyTo: type)
        }
        if checkRoom, let room = registry.room(of: identity.playerID) {
            return RoomRefusal.alreadyInRoom(room.code, same: false).error(inReplyTo: type)
        }
        if queue.level(of: identity.playerID) != nil {
            return ProtocolError(.alreadyInQueue, "You are waiting for a quick race: send leaveQueue first.", inReplyTo: type)
        }
        return nil
    }

    func shuttingDownError(_ type: String) -> ProtocolError {
        ProtocolError(.shuttingDown, "The server is restarting; try again in a moment.", inReplyTo: type)
    }

    func opened(_ room: RaceRoom) {
        lastTimerID += 1
        runs[room.code] = RoomRun(timerID: lastTimerID)
        runByTimer[lastTimerID] = room.code
    }

    func closedRoom(_ room: RaceRoom) {
        if let nodeID {
            let code = room.code.text
            worker.perform({ storage in try storage.roomPlaces.remove(code: code, nodeID: nodeID) }, then: { [self] result in
                if case .failure(let error) = result {
                    logger.warning("could not remove a closed room's place", metadata: ["room.code": code, "error": "\(error)"])
                }
            })
        }
        guard let run = runs.removeValue(forKey: room.code) else { return }
        // A race of a room that closed is not recorded (nobody is left to hear its results).
        if let race = run.race { releaseShutdown(race.key) }
        // Watchers of a race whose room closes (its last racer left) watch nothing any more.
        if let match = run.race?.match {
            let watchers = watching.raceEnded(match)
            if !watchers.isEmpty { connections.send(.roomLeft(code: room.code, reason: .closed), to: watchers) }
        }
        runByTimer[run.timerID] = nil
        scheduler.cancel(run.timerID)
        logger.info("room closed", metadata: ["room.code": room.code.text])
    }

    func run(of room: RaceRoom) -> RoomRun {
        if let run = runs[room.code] { return run }
        opened(room)
        return runs[room.code]!
    }

    /// Sets the room's one timer entry to its earliest deadline, or none.
    func reschedule(_ room: RaceRoom) {
        guard let run = runs[room.code] else { return }
        var deadlines = Array(run.dropDeadlines.values)
        if let race = run.race, room.state == .countdown || room.state == .racing {
            if !race.started { deadlines.append(race.startsAt) }
            deadlines.append(race.endsAt)
            if race.isOver { deadlines.append(MonotonicClock.now()) }
            if let due = race.standings.dueAt { deadlines.append(max(due, MonotonicClock.now())) }
            // Standings poll the racers' games: look again each interval while racing.
            if race.started { deadlines.append(MonotonicClock.now() + race.standings.interval) }
        }
        if let next = deadlines.min() { scheduler.schedule(run.timerID, at: next) } else { scheduler.cancel(run.timerID) }
    }

    private func timerDue(_ id: Int, now: Int64) {
        if id == Self.queueTimerID {
            for formed in queue.due(now: now) { form(formed) }
            for level in SpeedLevel.allCases where !queue.players(at: level).isEmpty { sendQueue(level) }
            return rescheduleQueue()
        }
        guard let code = runByTimer[id], let room = registry.room(code) else { return }
        roomTimerDue(room, now: now)
    }

    func connectionOf(_ playerID: Int64) -> WebSocketConnection? {
        roomConnection[playerID].flatMap { connections[$0] }
    }

    /// `room` to each racer (with their seat), and to every watcher of its race (`you` null,
    /// encoded once), plus `alsoTo` (the watchers of a race just over).
    func sendRoom(_ room: RaceRoom, alsoTo others: [WebSocketConnection] = []) {
        let watchers = watcherCount(room)
        for racer in room.racers {
            guard let connection = connectionOf(racer.playerID) else { continue }
            connections.send(.room(RoomView(room, you: racer.seat, watchers: watchers)), to: connection)
        }
        var receivers = others
        if let match = runs[room.code]?.race?.match {
            for seat in match.seats {
                for watcher in seat.watchers where !receivers.contains(where: { $0 === watcher }) { receivers.append(watcher) }
            }
        }
        if !receivers.isEmpty { connections.send(.room(RoomView(room, you: nil, watchers: watchers)), to: receivers) }
    }

    /// A match-wide message to every racer in the room and every watcher of its race, encoded
    /// once. (A racer whose game ended no longer plays its seat, but still hears the race.)
    func send(_ message: ServerMessage, in room: RaceRoom) {
        var receivers = room.racers.compactMap { connectionOf($0.playerID) }
        if let match = runs[room.code]?.race?.match {
            for seat in match.seats {
                for watcher in seat.receivers where !receivers.contains(where: { $0 === watcher }) { receivers.append(watcher) }
            }
        }
        connections.send(message, to: receivers)
    }

    func refuse(_ connection: WebSocketConnection, _ error: ProtocolError) {
        connections.refuse(connection, error)
    }
}
