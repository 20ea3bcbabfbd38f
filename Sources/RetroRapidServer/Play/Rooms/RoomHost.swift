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
/// Threading rule: owned by the `WebSocketHub` next to the `MatchHost`, on the libwebsockets
/// service thread; its timer fires from `lws_service` and the worker's completions come back
/// through the mailbox, both on that thread.
final class RoomHost: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.
    let configuration: ServerConfiguration
    let connections: ConnectionRegistry
    let host: MatchHost
    let worker: DatabaseWorker
    let logger: Logger
    let registry: RoomRegistry
    private(set) var queue: QuickRaceQueue
    /// One timer entry per room (its `timerID`) and one for the queue.
    private let scheduler = TickScheduler(maximumSleepMicroseconds: 50_000)
    private static let queueTimerID = -1

    /// The connection each racer hears their room on (the one that opened, joined or resumed).
    private var roomConnection: [Int64: Int] = [:]
    /// The connection each queued player waits on.
    private var queueConnection: [Int64: Int] = [:]
    /// What each room is doing beyond its lobby state: its timer id, the race running, the
    /// lobby racers whose connection dropped.
    private var runs: [RoomCode: RoomRun] = [:]
    private var runByTimer: [Int: RoomCode] = [:]
    /// The room whose race each race match is, by match id.
    private var raceByMatch: [Int: RoomCode] = [:]
    private var lastTimerID = 0
    private var lastRaceKey = 0
    /// Races (by `Race.key`) from their last game's end until their record is answered: each
    /// holds a shutdown back (`MatchHost.beginStore`), so the worker closes only after it.
    private var racesHoldingShutdown: Set<Int> = []
    /// Races whose plays are being consumed, by room.
    private var starts: [RoomCode: StartProgress] = [:]

    /// A start waiting for its racers' plays.
    private final class StartProgress {
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
    private final class RoomRun {
        let timerID: Int
        var race: Race?
        /// Lobby racers whose connection dropped: their seat goes at this deadline.
        var dropDeadlines: [Int64: Int64] = [:]
        init(timerID: Int) { self.timerID = timerID }
    }

    /// One race: its racers' games, when it starts and ends, its standings.
    private final class Race {
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

    init(configuration: ServerConfiguration, connections: ConnectionRegistry, host: MatchHost, worker: DatabaseWorker,
         logger: Logger, random: @escaping () -> UInt64 = { UInt64.random(in: .min ... .max) }) {
        self.configuration = configuration
        self.connections = connections
        self.host = host
        self.worker = worker
        self.logger = logger
        registry = RoomRegistry(maxRooms: configuration.maxRooms, random: random)
        queue = QuickRaceQueue(waitMicroseconds: Int64(configuration.quickRaceWaitSeconds) * 1_000_000)
        scheduler.onDue = { [unowned self] id, now in self.timerDue(id, now: now) }
        host.watching.roomSeat = { [unowned self] code, seat in self.watchedSeat(code: code, seat: seat) }
    }

    /// LWS_CALLBACK_PROTOCOL_INIT / DESTROY (through the hub).
    func attach(context: OpaquePointer) { scheduler.attach(context: context) }
    func detach() { scheduler.detach() }

    private var countdownMicroseconds: Int64 { Int64(configuration.raceCountdownSeconds) * 1_000_000 }
    private var graceMicroseconds: Int64 { Int64(configuration.disconnectGraceSeconds) * 1_000_000 }

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
        if host.shuttingDown { return refuse(connection, shuttingDownError(type)) }
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
    private func leave(_ playerID: Int64, answering connection: WebSocketConnection?, reason: RoomLeftReason = .left) {
        guard let (room, departure, closed) = try? registry.leave(playerID: playerID) else { return }
        let receiver = connection ?? roomConnection[playerID].flatMap { connections[$0] }
        roomConnection[playerID] = nil
        runs[room.code]?.dropDeadlines[playerID] = nil
        if let receiver { connections.send(.roomLeft(code: room.code, reason: reason), to: receiver) }
        if departure.wasRacing, let race = runs[room.code]?.race,
           let entrant = race.entrants.first(where: { $0.playerID == playerID }), entrant.result == nil {
            race.standings.setState(seat: entrant.seat, .left)
            if let match = race.match, let session = match.seats[entrant.seatIndex].session {
                host.deliver(session.end(.abandoned, now: MonotonicClock.now()), of: match, seat: match.seats[entrant.seatIndex])
            }
        }
        logger.info("room left", metadata: ["room.code": room.code.text, "room.seat": String(departure.seat)])
        if closed {
            closedRoom(room)
        } else {
            sendRoom(room)
        }
    }

    // MARK: - Starting a race

    func startRace(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = "startRace"
        guard let room = registry.room(of: identity.playerID) else {
            return refuse(connection, RoomRefusal.notInRoom.error(inReplyTo: type))
        }
        if host.shuttingDown { return refuse(connection, shuttingDownError(type)) }
        let racers: [RaceRoom.Racer]
        do throws(RoomRefusal) {
            racers = try room.checkStart(by: identity.playerID)
        } catch let refusal {
            return refuse(connection, refusal.error(inReplyTo: type))
        }
        // A racer with a game of their own going cannot race too.
        if let busy = racers.first(where: { host.game(of: $0.playerID) != nil || host.isStarting($0.playerID) }) {
            return refuse(connection, ProtocolError(.notReady,
                "\(busy.name) has a game of their own running; they must finish or quit it first.", inReplyTo: type))
        }
        rebind(room, playerID: identity.playerID, to: connection)
        begin(room, racers: racers)
    }

    /// Consumes a play for each racer (none in a practice room), then starts the race with
    /// those whose play was taken, if 2 or more.
    private func begin(_ room: RaceRoom, racers: [RaceRoom.Racer]) {
        room.beginStart()
        let seed = Match.newSeed()
        let gameIDs = Dictionary(uniqueKeysWithValues: racers.map { ($0.playerID, Match.newGameID()) })
        // Practice consumes no play: on a single server nothing to wait for. In a cluster each
        // game is still claimed for this node, as a practice `start` is.
        if room.practice && host.handoff == nil {
            return launch(room, racers: racers, gameIDs: gameIDs, seed: seed, quotas: [:])
        }
        let practice = room.practice
        starts[room.code] = StartProgress(racers: racers, gameIDs: gameIDs, seed: seed)
        let code = room.code
        let nodeID = host.handoff?.nodeID
        let level = room.level
        for racer in racers {
            let gameID = gameIDs[racer.playerID]!
            let playerID = racer.playerID
            // Keyed by the player, as every job of a game's life is: its start, checkpoints and
            // record run in this order on one storage thread (as MatchHost.start does).
            host.beginStart(playerID)
            worker.perform(orderedBy: playerID, { storage in
                let start = RunningGameStart(publicID: gameID, playerID: playerID, level: level, seed: seed,
                                             practice: practice, startedAt: storage.now)
                if let nodeID { return try GameHandoff.beginClaimed(start, nodeID: nodeID, storage: storage) }
                return try storage.runningGames.begin(start)
            }, then: { [self] result in playAnswered(result, racer: racer, code: code) })
        }
    }

    private func playAnswered(_ result: Result<QuotaStatus?, any Error>, racer: RaceRoom.Racer, code: RoomCode) {
        let playerID = racer.playerID
        host.endStart(playerID)
        guard let progress = starts[code] else { return }
        switch result {
        case .success(let quota): progress.quotas[playerID] = quota
        case .failure(let error as QuotaExhaustedError):
            progress.failed.append((racer, ProtocolError(.noPlaysLeft, error.storeError.message, inReplyTo: "startRace"),
                                    error.status))
        case .failure(let error as GameElsewhereError):
            progress.failed.append((racer, ProtocolError(.gameInProgress,
                "Game \(error.gameID) is waiting for you: resume or quit it before racing.", inReplyTo: "startRace"), nil))
        case .failure(let error):
            logger.error("could not start a race game", metadata: ["player.row": String(playerID), "error": "\(error)"])
            progress.failed.append((racer, ProtocolError(.unavailable,
                "Your race game could not start just now; nothing was used up.", inReplyTo: "startRace"), nil))
        }
        progress.pending -= 1
        guard progress.pending == 0 else { return }
        starts[code] = nil
        guard let room = registry.room(code) else {
            // Everyone left meanwhile: every play taken goes back.
            for (playerID, _) in progress.quotas { host.recorder.cancelStart(gameID: progress.gameIDs[playerID]!, playerID: playerID) }
            return
        }
        consumed(room, racers: progress.racers, gameIDs: progress.gameIDs, seed: progress.seed, quotas: progress.quotas,
                 failed: progress.failed)
    }

    /// Every racer's play is answered: the racers whose play failed are told why and sit out,
    /// not ready; with fewer than 2 left every play taken is given back and the room stays in
    /// the lobby.
    private func consumed(_ room: RaceRoom, racers: [RaceRoom.Racer], gameIDs: [Int64: String], seed: UInt64,
                          quotas: [Int64: QuotaStatus?], failed: [(RaceRoom.Racer, ProtocolError, QuotaStatus?)]) {
        for (racer, error, quota) in failed {
            room.unready(playerID: racer.playerID)
            if let connection = connectionOf(racer.playerID) { connections.refuse(connection, error, quota: quota) }
        }
        // Racers who left the room meanwhile do not race: their play goes back.
        let racing = racers.filter { quotas[$0.playerID] != nil && room.racer($0.playerID) != nil }
        let leftMeanwhile = racers.filter { quotas[$0.playerID] != nil && room.racer($0.playerID) == nil }
        for racer in leftMeanwhile { host.recorder.cancelStart(gameID: gameIDs[racer.playerID]!, playerID: racer.playerID) }
        if racing.count < 2 || host.shuttingDown {
            for racer in racing { host.recorder.cancelStart(gameID: gameIDs[racer.playerID]!, playerID: racer.playerID) }
            room.cancelStart()
            let names = failed.map(\.0.name).joined(separator: ", ")
            let why = host.shuttingDown
                ? ProtocolError(.shuttingDown, "The server is restarting; every play was given back.", inReplyTo: "startRace")
                : ProtocolError(.notReady, "The race needs 2 racers or more; \(names.isEmpty ? "too few" : names) could not "
                    + "race, so every play was given back.", inReplyTo: "startRace")
            for racer in room.racers { if let connection = connectionOf(racer.playerID) { connections.refuse(connection, why) } }
            return sendRoom(room)
        }
        launch(room, racers: racing, gameIDs: gameIDs, seed: seed, quotas: quotas)
    }

    /// The racers' games, one per racer on one seed, all starting at one deadline after the
    /// countdown: `started` to each now, `countdown` to every receiver, the first step one
    /// interval after the deadline.
    private func launch(_ room: RaceRoom, racers: [RaceRoom.Racer], gameIDs: [Int64: String], seed: UInt64,
                        quotas: [Int64: QuotaStatus?]) {
        let now = MonotonicClock.now()
        let startsAt = now + countdownMicroseconds
        let endsAt = startsAt + Int64(configuration.raceTimeLimitSeconds) * 1_000_000
        var entrants: [Race.Entrant] = []
        var entries: [RaceStandings.Entry] = []
        var startedMessages: [(WebSocketConnection, ServerMessage)] = []
        // Every session starts at the deadline: its first step comes one interval after it.
        let sessions = racers.map { racer in
            GameSession(id: host.nextID(), gameID: gameIDs[racer.playerID]!, playerID: racer.playerID, level: room.level,
                        seed: seed, practice: room.practice, graceLimitMilliseconds: host.limits.latencyGraceMilliseconds,
                        startedAt: Date(), now: startsAt)
        }
        let match = Match(id: host.nextID(), kind: .race, seed: seed, startsAt: startsAt, drivers: sessions)
        guard host.add(match) else {
            // A racer started a game of their own meanwhile, or the server is stopping.
            for session in sessions where !room.practice {
                host.recorder.cancelStart(gameID: session.gameID, playerID: session.playerID)
            }
            room.cancelStart()
            let why = ProtocolError(.notReady, "A racer has a game of their own running; every play was given back.",
                                    inReplyTo: "startRace")
            for racer in room.racers { if let connection = connectionOf(racer.playerID) { connections.refuse(connection, why) } }
            return sendRoom(room)
        }
        let code = room.code
        match.roomCode = code.text
        raceByMatch[match.id] = code
        match.onSeatEnded = { [unowned self] seat, reason in self.seatEnded(seat, reason: reason, code: code) }
        for (index, racer) in racers.enumerated() {
            let seat = match.seats[index]
            let session = sessions[index]
            if room.practice && host.handoff == nil { host.recorder.recordPracticeStart(session, seed: seed) }
            entrants.append(Race.Entrant(seat: racer.seat, playerID: racer.playerID, name: racer.name,
                                         gameID: session.gameID, seatIndex: index))
            entries.append(.init(seat: racer.seat, name: racer.name, gameID: session.gameID, score: 0,
                                 lane: session.game.state.lane.rawValue, step: 0, state: .racing))
            session.race = code
            let snapshot = session.snapshot
            if let connection = connectionOf(racer.playerID), connection.closing == nil {
                host.attach(seat, of: match, to: connection)
                startedMessages.append((connection, .started(snapshot, quota: quotas[racer.playerID] ?? nil)))
            } else {
                session.detach(now: now, deadline: now + graceMicroseconds)
            }
        }
        host.reschedule(match)
        lastRaceKey += 1
        let race = Race(key: lastRaceKey, seed: seed, startsAt: startsAt, endsAt: endsAt, entrants: entrants,
                        standings: RaceStandings(entries: entries,
                                                 intervalMicroseconds: Int64(configuration.standingsIntervalMilliseconds) * 1000))
        race.match = match
        run(of: room).race = race
        room.beginCountdown(seats: racers.map(\.seat))
        logger.info("race starting", metadata: ["room.code": room.code.text, "race.racers": String(racers.count),
                                                 "room.race": String(room.race)])
        // The room (counting down) first, then each racer's game, then the countdown.
        sendRoom(room)
        for (connection, started) in startedMessages { connections.send(started, to: connection) }
        send(.countdown(code: room.code, startsInMilliseconds: Int(countdownMicroseconds / 1000)), in: room)
        reschedule(room)
    }

    /// A move or pause on a race game before the race's deadline is refused (`not_started`).
    func refusalBeforeStart(on connection: WebSocketConnection, type: String, now: Int64) -> ProtocolError? {
        guard let address = connection.seat, let code = raceByMatch[address.match],
              let race = runs[code]?.race, now < race.startsAt else { return nil }
        return ProtocolError(.notStarted, "The race starts in \(max(1, (race.startsAt - now) / 1000)) ms; wait for the first step.",
                             inReplyTo: type)
    }

    /// `watch` with `room` (`WatchHost.roomSeat`): the race match and the seat index room seat
    /// `seat` races in (nil: the first racer's), or why not.
    private func watchedSeat(code typed: String, seat: Int?) -> Result<(match: Match, seat: Int), ProtocolError> {
        guard let code = RoomCode(reading: typed), let room = registry.room(code) else {
            return .failure(RoomRefusal.roomNotFound(String(typed.prefix(16))).error(inReplyTo: "watch"))
        }
        guard let race = runs[code]?.race, let match = race.match else {
            return .failure(ProtocolError(.gameNotFound,
                "Room \(room.code) is in its lobby: no race to watch yet. Watch again once it starts.", inReplyTo: "watch"))
        }
        let entrant = seat.map { wanted in race.entrants.first { $0.seat == wanted } } ?? race.entrants.first
        guard let entrant else {
            return .failure(ProtocolError(.gameNotFound, "Room \(room.code) has no racer in seat \(seat ?? 0).", inReplyTo: "watch"))
        }
        return .success((match, entrant.seatIndex))
    }

    /// `watch` from the hub: a room another node holds (cluster mode) is answered
    /// `room_elsewhere`; everything else goes to the `WatchHost`.
    func watch(_ target: ClientMessage.WatchTarget, for identity: WebSocketConnection.Identity,
               on connection: WebSocketConnection) {
        // The code as the room writes it, however it was typed (`watching` repeats it).
        var written = target
        if case .room(let typed, let seat) = target, let code = RoomCode(reading: typed) { written = .room(code: code.text, seat: seat) }
        let target = written
        guard case .room(let typed, _) = target, nodeID != nil, let code = RoomCode(reading: typed),
              registry.room(code) == nil else {
            return host.watching.watch(target, for: identity, on: connection)
        }
        let connectionID = connection.id
        lookUpPlace(code) { [self] node in
            guard let connection = connections[connectionID] else { return }
            guard let node else { return host.watching.watch(target, for: identity, on: connection) }
            var refusal = ProtocolError(.roomElsewhere, "Room \(code) is on server \(node): connect to it and watch again.",
                                        inReplyTo: "watch")
            refusal.node = node
            connections.refuse(connection, refusal)
        }
    }

    /// How many watch the room's race now (every seat's watchers).
    private func watcherCount(_ room: RaceRoom) -> Int {
        runs[room.code]?.race?.match?.seats.reduce(0) { $0 + $1.watchers.count } ?? 0
    }

    // MARK: - A race running

    /// A racer's game ended (crash, quit, grace over, time limit, shutdown), before it is saved.
    private func seatEnded(_ seat: MatchSeat, reason: GameEndReason, code: RoomCode) {
        guard let race = runs[code]?.race, let session = seat.session,
              let index = race.entrants.firstIndex(where: { $0.seatIndex == seat.address.seat }) else { return }
        if race.entrants.allSatisfy({ $0.result != nil || $0.seatIndex == seat.address.seat }) {
            raceByMatch[seat.address.match] = nil
        }
        let state = session.game.state
        var entrant = race.entrants[index]
        let timeLimited = reason == .abandoned && MonotonicClock.now() >= race.endsAt
        entrant.result = timeLimited ? RaceStandings.RacerState.timeLimit.rawValue : reason.rawValue
        entrant.score = state.score
        entrant.steps = state.step
        race.entrants[index] = entrant
        let standingsState: RaceStandings.RacerState = switch reason {
        case .crash: .crashed
        case .abandoned where timeLimited: .timeLimit
        // Quit, left the room, or away past the grace.
        case .abandoned: .left
        default: .finished
        }
        race.standings.update(seat: entrant.seat, score: state.score, lane: state.lane.rawValue, step: state.step,
                              state: standingsState)
        // Taken now, in the same turn as the last game's end (a shutdown ends every game at
        // once, then closes the worker when nothing it knows of is in flight).
        if race.isOver { holdShutdown(race) }
        if let room = registry.room(code) { reschedule(room) }
    }

    private func holdShutdown(_ race: Race) {
        if racesHoldingShutdown.insert(race.key).inserted { host.beginStore() }
    }

    private func releaseShutdown(_ key: Int) {
        if racesHoldingShutdown.remove(key) != nil { host.endStore() }
    }

    /// The room's timer: the countdown's end, standings due, the time limit, the race's end,
    /// dropped lobby racers whose grace is over.
    private func roomTimerDue(_ room: RaceRoom, now: Int64) {
        guard let run = runs[room.code] else { return }
        for (playerID, deadline) in run.dropDeadlines where deadline <= now {
            run.dropDeadlines[playerID] = nil
            if room.state == .lobby && !room.starting { leave(playerID, answering: nil) }
        }
        guard registry.room(room.code) === room else { return }
        if let race = run.race, room.state == .countdown || room.state == .racing {
            if !race.started, now >= race.startsAt {
                race.started = true
                room.beginRacing()
                sendRoom(room)
            }
            if race.started, now >= race.endsAt, !race.isOver {
                // The time limit: the racers still racing end, stored abandoned with their scores.
                for entrant in race.entrants where entrant.result == nil {
                    if let match = race.match, let session = match.seats[entrant.seatIndex].session, !session.isOver {
                        host.deliver(session.end(.abandoned, now: now), of: match, seat: match.seats[entrant.seatIndex])
                    }
                }
            }
            poll(race)
            if race.isOver {
                room.finish()
                send(.standings(code: room.code, racers: race.standings.takeLast(now: now)), in: room)
                sendRoom(room)
                afterSaves(room, race: race)
            } else if race.started || race.standings.lastSentAt == nil, let standings = race.standings.take(now: now) {
                send(.standings(code: room.code, racers: standings), in: room)
            }
        }
        reschedule(room)
    }

    /// Reads each racing racer's game into the standings (what changed is sent at the next
    /// due time): a few numbers per racer per interval, no hook on every step.
    private func poll(_ race: Race) {
        for entrant in race.entrants where entrant.result == nil {
            guard let session = race.match?.seats[entrant.seatIndex].session else { continue }
            let state = session.game.state
            let racerState: RaceStandings.RacerState = session.isDisconnected ? .away : (state.isOver ? .crashed : .racing)
            race.standings.update(seat: entrant.seat, score: state.score, lane: state.lane.rawValue, step: state.step,
                                  state: racerState)
        }
    }

    /// Every racer's game is being saved: once each save is done (a job behind it on the same
    /// player's storage lane answers), the race is recorded, `raceOver` goes out and the room
    /// is back in the lobby.
    private func afterSaves(_ room: RaceRoom, race: Race) {
        race.savesPending = race.entrants.count
        let code = room.code
        let key = race.key
        for entrant in race.entrants {
            worker.perform(orderedBy: entrant.playerID, { _ in () }, then: { [self] _ in
                guard let room = registry.room(code), let race = runs[code]?.race, race.key == key else {
                    return releaseShutdown(key)
                }
                race.savesPending -= 1
                if race.savesPending == 0 { recordRace(room, race: race) }
            })
        }
    }

    /// Stores the finish order (`RaceRepository`, one transaction), then answers `raceOver`. A
    /// race that cannot be stored still ends for its racers: their games are saved already, and
    /// `raceId` is null.
    private func recordRace(_ room: RaceRoom, race: Race) {
        let placed = race.standings.placed
        let results = placed.compactMap { entry -> RaceOutcome.Result? in
            guard let entrant = race.entrants.first(where: { $0.seat == entry.seat }) else { return nil }
            return RaceOutcome.Result(place: entry.place, seat: entry.seat, name: entry.name, gameID: entry.gameID,
                                      score: entry.score, reason: entrant.result ?? "abandoned")
        }
        let entries = results.compactMap { result -> NewRace.Entry? in
            guard let entrant = race.entrants.first(where: { $0.seat == result.seat }) else { return nil }
            return NewRace.Entry(place: result.place, seat: result.seat, playerID: entrant.playerID, gameID: result.gameID,
                                 score: result.score, endReason: RaceEndReason(rawValue: result.reason) ?? .abandoned)
        }
        let newRace = NewRace(roomCode: room.code.text, level: room.level, practice: room.practice, seed: race.seed,
                              startedAt: race.startedAt, endedAt: Date(), entries: entries)
        let code = room.code
        let key = race.key
        worker.perform({ storage in try storage.races.record(newRace).publicID }, then: { [self] result in
            // After `raceOver` went out: a shutdown closes the connections once nothing holds it.
            defer { releaseShutdown(key) }
            let raceID: String?
            switch result {
            case .success(let id): raceID = id
            case .failure(let error):
                raceID = nil
                logger.error("could not store a race", metadata: ["room.code": code.text, "error": "\(error)"])
            }
            guard let room = registry.room(code), let race = runs[code]?.race else {
                runs[code]?.race = nil
                return
            }
            raceRecorded(room, race: race, outcome: RaceOutcome(code: code, raceID: raceID, results: results))
        })
    }

    private func raceRecorded(_ room: RaceRoom, race: Race, outcome: RaceOutcome) {
        guard registry.room(room.code) === room else {
            runs[room.code]?.race = nil
            if let match = race.match { host.watching.raceEnded(match) }
            return
        }
        logger.info("race over", metadata: ["room.code": room.code.text, "race.id": outcome.raceID ?? "-"])
        // To the racers and the race's watchers (still on it); then the watch of the race is over.
        send(.raceOver(outcome), in: room)
        runs[room.code]?.race = nil
        let watchers = race.match.map { host.watching.raceEnded($0) } ?? []
        room.backToLobby()
        // Racers who dropped during the race and have not come back get the lobby's grace.
        let deadline = MonotonicClock.now() + graceMicroseconds
        for racer in room.racers where connectionOf(racer.playerID) == nil {
            room.setConnected(playerID: racer.playerID, false)
            run(of: room).dropDeadlines[racer.playerID] = deadline
        }
        sendRoom(room, alsoTo: watchers)
        reschedule(room)
    }

    // MARK: - Quick race

    func quickRace(level: SpeedLevel, for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        let type = "quickRace"
        if host.shuttingDown { return refuse(connection, shuttingDownError(type)) }
        if let refusal = refusalToEnter(identity, type: type) { return refuse(connection, refusal) }
        do throws(RoomRefusal) {
            let formed = try queue.join(playerID: identity.playerID, name: identity.displayName, level: level,
                                        now: MonotonicClock.now())
            queueConnection[identity.playerID] = connection.id
            if let formed { form(formed) } else { sendQueue(level) }
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: type))
        }
        rescheduleQueue()
    }

    func leaveQueue(for identity: WebSocketConnection.Identity, on connection: WebSocketConnection) {
        do throws(RoomRefusal) {
            let level = try queue.leave(playerID: identity.playerID)
            queueConnection[identity.playerID] = nil
            var view = QueueView(level: level, waiting: 0, startsInMilliseconds: nil)
            view.left = true
            connections.send(.queue(view), to: connection)
            sendQueue(level)
        } catch let refusal {
            refuse(connection, refusal.error(inReplyTo: "leaveQueue"))
        }
        rescheduleQueue()
    }

    /// Every waiting player at the level hears how many wait and how long until the room forms.
    private func sendQueue(_ level: SpeedLevel) {
        let now = MonotonicClock.now()
        let waiting = queue.players(at: level)
        let view = QueueView(level: level, waiting: waiting.count,
                             startsInMilliseconds: queue.startsAt(level).map { Int(max(0, $0 - now) / 1000) })
        for player in waiting {
            if let connection = queueConnection[player.playerID].flatMap({ connections[$0] }) { connections.send(.queue(view), to: connection) }
        }
    }

    /// A quick room of the players the queue gave, already counting down (everyone ready).
    private func form(_ formed: QuickRaceQueue.Formed) {
        let players = formed.players.filter { queueConnection[$0.playerID].flatMap { connections[$0] } != nil }
        let queueConnectionIDs = queueConnection
        for player in formed.players { queueConnection[player.playerID] = nil }
        guard players.count >= 2, let first = players.first,
              let room = try? registry.open(level: formed.level, seats: QuickRaceQueue.roomSize, practice: false, quick: true,
                                            hostID: first.playerID, hostName: first.name)
        else {
            logger.warning("a quick race could not form", metadata: ["game.level": formed.level.rawValue])
            return
        }
        opened(room)
        for player in players.dropFirst() {
            _ = try? registry.join(typed: room.code.text, playerID: player.playerID, name: player.name)
        }
        // Only those still connected were seated; their connections carry the room from now on.
        for player in players { roomConnection[player.playerID] = queueConnectionIDs[player.playerID] }
        room.readyEveryone()
        logger.info("quick race formed", metadata: ["room.code": room.code.text, "race.racers": String(players.count)])
        begin(room, racers: room.racers)
    }

    private func rescheduleQueue() {
        if let deadline = queue.nextDeadline { scheduler.schedule(Self.queueTimerID, at: deadline) } else {
            scheduler.cancel(Self.queueTimerID)
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

    private func rebind(_ room: RaceRoom, playerID: Int64, to connection: WebSocketConnection) {
        roomConnection[playerID] = connection.id
        runs[room.code]?.dropDeadlines[playerID] = nil
        room.setConnected(playerID: playerID, true)
    }

    // MARK: - Rooms in a cluster

    /// This node's name in a cluster; nil on a single server (no places written).
    private var nodeID: String? { host.handoff?.nodeID }

    /// Places the new room's code on this node (`room_places`), then sends its `room`. A code a
    /// live node holds already is drawn again (the room is reopened under a new code, `attempts`
    /// times); on a single server there is nothing to place.
    private func place(_ room: RaceRoom, attempts: Int) {
        guard let nodeID else { return sendRoom(room) }
        let code = room.code
        worker.perform({ storage in
            try storage.roomPlaces.place(code: code.text, nodeID: nodeID, now: storage.now, lease: ClusterLease.lease)
        }, then: { [self] result in
            guard let room = registry.room(code) else { return }
            switch result {
            case .success(true):
                sendRoom(room)
            case .success(false) where attempts > 1:
                guard let host = room.host, let connection = connectionOf(host.playerID) else { return }
                _ = try? registry.leave(playerID: host.playerID)
                closedRoom(room)
                guard let again = try? registry.open(level: room.level, seats: room.seats, practice: room.practice,
                                                     quick: room.quick, hostID: host.playerID, hostName: host.name) else { return }
                opened(again)
                roomConnection[host.playerID] = connection.id
                place(again, attempts: attempts - 1)
            case .success(false), .failure:
                if case .failure(let error) = result {
                    logger.error("could not place a room", metadata: ["room.code": code.text, "error": "\(error)"])
                }
                let receivers = room.racers.compactMap { connectionOf($0.playerID) }
                for racer in room.racers { _ = try? registry.leave(playerID: racer.playerID) }
                closedRoom(room)
                for connection in receivers {
                    connections.refuse(connection, ProtocolError(.unavailable,
                        "The room could not be opened just now; nothing was used up. Try again.", inReplyTo: "openRoom"))
                }
            }
        })
    }

    /// The node that holds `code`'s room, if another live node does (cluster mode).
    func lookUpPlace(_ code: RoomCode, then answer: @escaping @Sendable (String?) -> Void) {
        guard let nodeID else { return answer(nil) }
        worker.perform({ storage in
            try storage.roomPlaces.place(ofCode: code.text, now: storage.now, lease: ClusterLease.lease)?.nodeID
        }, then: { result in
            guard case .success(let node?) = result, node != nodeID else { return answer(nil) }
            answer(node)
        })
    }

    // MARK: - Looking rooms up

    /// `GET /api/v1/rooms/{code}`: the room as anyone may see it.
    func publicView(_ typed: String) -> RoomView? {
        guard let code = RoomCode(reading: typed), let room = registry.room(code) else { return nil }
        return RoomView(room, you: nil, watchers: watcherCount(room))
    }

    // MARK: - Parts

    /// Why the player may not open, join or queue now: a game of theirs, a room, the queue.
    private func refusalToEnter(_ identity: WebSocketConnection.Identity, type: String, checkRoom: Bool = true) -> ProtocolError? {
        if host.shuttingDown { return shuttingDownError(type) }
        if let game = host.game(of: identity.playerID) {
            return ProtocolError(.gameInProgress,
                "Game \(game.gameID) is yours and not over: finish or quit it first.", inReplyTo: type)
        }
        if host.isStarting(identity.playerID) {
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

    private func shuttingDownError(_ type: String) -> ProtocolError {
        ProtocolError(.shuttingDown, "The server is restarting; try again in a moment.", inReplyTo: type)
    }

    private func opened(_ room: RaceRoom) {
        lastTimerID += 1
        runs[room.code] = RoomRun(timerID: lastTimerID)
        runByTimer[lastTimerID] = room.code
    }

    private func closedRoom(_ room: RaceRoom) {
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
            let watchers = host.watching.raceEnded(match)
            if !watchers.isEmpty { connections.send(.roomLeft(code: room.code, reason: .closed), to: watchers) }
        }
        runByTimer[run.timerID] = nil
        scheduler.cancel(run.timerID)
        logger.info("room closed", metadata: ["room.code": room.code.text])
    }

    private func run(of room: RaceRoom) -> RoomRun {
        if let run = runs[room.code] { return run }
        opened(room)
        return runs[room.code]!
    }

    /// Sets the room's one timer entry to its earliest deadline, or none.
    private func reschedule(_ room: RaceRoom) {
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

    private func connectionOf(_ playerID: Int64) -> WebSocketConnection? {
        roomConnection[playerID].flatMap { connections[$0] }
    }

    /// `room` to each racer (with their seat), and to every watcher of its race (`you` null,
    /// encoded once), plus `alsoTo` (the watchers of a race just over).
    private func sendRoom(_ room: RaceRoom, alsoTo others: [WebSocketConnection] = []) {
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
    private func send(_ message: ServerMessage, in room: RaceRoom) {
        var receivers = room.racers.compactMap { connectionOf($0.playerID) }
        if let match = runs[room.code]?.race?.match {
            for seat in match.seats {
                for watcher in seat.receivers where !receivers.contains(where: { $0 === watcher }) { receivers.append(watcher) }
            }
        }
        connections.send(message, to: receivers)
    }

    private func refuse(_ connection: WebSocketConnection, _ error: ProtocolError) {
        connections.refuse(connection, error)
    }
}
