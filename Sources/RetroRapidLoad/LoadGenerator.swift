#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RetroRapidLWS
import RetroRapidRules
import RetroRapidSupport
import Synchronization

/// Many player connections from one libwebsockets client context, on one thread: ramps up to
/// the asked number, lets them settle, measures a window, and reports (`LoadReport`).
///
/// Threading rule: everything runs on the thread that calls `run()`, which runs the libev loop
/// and so is the context's service thread: every libwebsockets call, every callback (`loadClientCallback`),
/// the one timer that drives the ramp and every player's next action. Nothing else touches the
/// players. The only cross-thread signal is SIGINT, which sets an atomic read by the timer.
///
/// Cheap on purpose, because it shares a small machine with the server it measures: messages
/// are read with `MessageScanner` (no JSON decoding), written from per-connection buffers
/// (no allocation per message), and all players share one libwebsockets timer.
public final class LoadGenerator {
    public let options: LoadTestOptions
    var players: [VirtualPlayer]
    var statistics = LoadStatistics()
    let interval: Int
    private let tokens: [[UInt8]]
    /// One send buffer per connection (libwebsockets may read it after `lws_write` returns):
    /// LWS_PRE bytes of headroom, then the message.
    private let sendBuffers: UnsafeMutableRawPointer
    private static let sendBufferPayload = 256
    private var sendBufferStride: Int { LWSConnection.headroom + Self.sendBufferPayload }
    /// Wakes at least every 10 ms (libev; see `TickScheduler.maximumSleep`): a bot's move is
    /// planned from a socket callback 150 ms or more ahead, so it is never held back.
    let scheduler = TickScheduler(maximumSleepMicroseconds: 10_000)
    private var controlID: Int { players.count }
    /// The client context, while `run` runs; its C memory goes with it.
    private var context: LWSNativeContext?
    /// Where every connection goes (C strings the context keeps).
    private var target: LWSNativeContext.ClientTarget?
    /// The game URLs welcomes named (`--follow-game-url`), made into targets once each.
    private var straightTargets: [String: LWSNativeContext.ClientTarget] = [:]

    private enum Phase { case ramping, settling, holding, finished }
    private var phase = Phase.ramping
    private var phaseStartedAt: Int64 = 0
    private var nextToConnect = 0
    private var lastProgressAt: Int64 = 0
    private var interrupted = false
    // Samples for the report.
    private var serverBeforeRamp: ProcessSample?
    private var serverAtHoldStart: ProcessSample?
    private var serverAtHoldEnd: ProcessSample?
    private var selfAtHoldStart: ProcessSample?
    private var selfAtHoldEnd: ProcessSample?
    private var holdStartedAt: Int64 = 0
    private var holdEndedAt: Int64 = 0
    private var connectionsAtHoldEnd = 0
    private var gamesAtHoldEnd = 0
    private var peakConnections = 0
    private var watchingAtHoldEnd = 0
    /// A bounded test (`options.steps`): players whose one game has ended, or who closed.
    private var boundedPlayersDone = 0
    /// Close codes peers sent, until the connection's CLIENT_CLOSED reads them.
    var peerCloseCodes: [Int: Int] = [:]

    // Race and watch tests (LoadGenerator+PlayTogether.swift): all empty in a solo test
    // without watchers.
    let seating: PlayTogetherPlan
    /// Each room's code, once its host's `room` answer brought it.
    var roomCodes: [[UInt8]] = []
    /// Each player's current game id (from `started`), for watchers of solo games.
    var gameIds: [[UInt8]] = []
    /// The watchers (connection indices) that follow each player.
    var watchersOf: [[Int]] = []
    /// When each player received each of its last `stepRingSize` steps (by step modulo the
    /// size), to time a watcher's copy of the same step against it.
    var stepArrivals: [Int64] = []
    var stepArrivalNumbers: [Int32] = []
    static let stepRingSize = 8
    var hasWatchers: Bool { options.watchers > 0 }
    var isRace: Bool { options.mode == .race }

    /// Set from the SIGINT handler; the timer ends the run early and still reports.
    static let interruptRequested = Atomic<Bool>(false)
    /// Handshakes in progress at once, so the ramp never queues more than the server can take.
    static let maximumConnecting = 400
    static let controlTickMicroseconds: Int64 = 10_000
    static let progressEveryMicroseconds: Int64 = 5_000_000

    public init(options: LoadTestOptions) throws(LoadTestError) {
        try options.validate()
        self.options = options
        interval = ["cruise": 800, "fast": 600, "rapid": 420][options.level]!
        var seeds = SplitMix64(seed: options.seed)
        let total = options.connections + options.watchers
        tokens = options.tokens.prefix(total).map { Array($0.utf8) }
        players = (0..<total).map { _ in
            VirtualPlayer(bot: LoadBot(behaviour: options.behaviour, seed: seeds.next()))
        }
        stateCounts = [Int](repeating: 0, count: VirtualPlayer.State.allCases.count)
        stateCounts[VirtualPlayer.State.waiting.rawValue] = total
        let stride = LWSConnection.headroom + Self.sendBufferPayload
        sendBuffers = UnsafeMutableRawPointer.allocate(byteCount: stride * total, alignment: 16)
        seating = PlayTogetherPlan(options)
        if options.mode == .race { roomCodes = [[UInt8]](repeating: [], count: seating.rooms) }
        if options.watchers > 0 {
            watchersOf = seating.watchersByTarget()
            if options.mode == .solo { gameIds = [[UInt8]](repeating: [], count: options.connections) }
            stepArrivals = [Int64](repeating: 0, count: options.connections * Self.stepRingSize)
            stepArrivalNumbers = [Int32](repeating: -1, count: options.connections * Self.stepRingSize)
        }
    }

    deinit {
        sendBuffers.deallocate()
    }

    /// Runs the whole test on the calling thread and returns what it measured.
    public func run(progress: @escaping (String) -> Void = { _ in }) throws(LoadTestError) -> LoadReport {
        OpenFileLimit.raiseToHardLimit()
        LWSLogging.configureOnce()
        self.progress = progress
        Self.interruptRequested.store(false, ordering: .relaxed)
        let previousHandler = signal(SIGINT) { _ in LoadGenerator.interruptRequested.store(true, ordering: .relaxed) }
        defer { signal(SIGINT, previousHandler) }

        guard case .success(let context) = LWSNativeContext.create(contextOptions()) else {
            throw LoadTestError("libwebsockets could not create the client context (is Debian's libwebsockets-evlib-ev installed? see the log above)")
        }
        self.context = context
        target = context.clientTarget(
            address: options.host == "localhost" ? "127.0.0.1" : options.host, port: options.port,
            host: "\(options.host):\(options.port)", path: "/ws", subprotocol: "retrorapid.v1",
            sources: options.sourceAddresses)
        let now = MonotonicClock.now()
        serverBeforeRamp = options.serverPID.flatMap { ProcessSampler.sample(pid: $0, at: now) }
        phaseStartedAt = now
        lastProgressAt = now
        scheduler.onDue = { [unowned self] id, now in due(id, now: now) }
        scheduler.attach(context: context.pointer)
        scheduler.schedule(controlID, at: now)
        _ = context.run()  // the libev loop, until `serviceWoken` stops it, after `finish`
        scheduler.detach()
        context.destroy()
        self.context = nil
        target = nil
        return makeReport()
    }

    private var progress: (String) -> Void = { _ in }

    // MARK: - Context and connections

    /// One client protocol on libev; the generator is its owner.
    private func contextOptions() -> LWSNativeContext.Options {
        LWSNativeContext.Options(
            protocols: [LWSProtocol(name: "retrorapid.v1", callback: loadClientCallback,
                                    owner: Unmanaged.passUnretained(self).toOpaque(), rxBufferSize: 1024)],
            usesLibev: true)
    }

    private func connect(_ index: Int, to chosen: LWSNativeContext.ClientTarget? = nil) {
        guard let context, let target = chosen ?? target else { return }
        setState(index, .connecting)
        // A failure may be reported through CLIENT_CONNECTION_ERROR during this call.
        if let wsi = context.connect(to: target, sourceIndex: index, opaqueUserData: index + 1),
           players[index].state == .connecting {
            players[index].wsi = wsi
        } else if players[index].state == .connecting {
            closed(index, code: nil, failedToConnect: true)
        }
    }

    /// Notes what a dropped connection's game had reached (its first drop of an outage) and
    /// plans a new connection, as the browser does: 0.5 s after a drop, 1 s after a failed open.
    private func reconnectLater(_ index: Int, wasPlaying: Bool, failedToConnect: Bool) {
        let now = MonotonicClock.now()
        if players[index].droppedAt == 0 {
            players[index].droppedAt = now
            players[index].droppedStep = wasPlaying ? players[index].lastStep : -1
            players[index].droppedInterval = players[index].lastInterval
            if wasPlaying { statistics.wholeRun.droppedWhilePlaying += 1 }
        }
        plan(index, .reconnect, at: now + (failedToConnect ? 1_000_000 : 500_000))
    }

    /// A game back after its connection dropped: how long it took and the play it lost.
    private func tookBack(_ index: Int, _ snapshot: MessageScanner, now: Int64) {
        let player = players[index]
        players[index].droppedAt = 0
        guard player.droppedStep >= 0, let step = snapshot.integer("step") else { return }
        let lostSteps = Int64(max(0, player.droppedStep - step))
        statistics.wholeRun.takenBack.append((player.droppedAt, now, lostSteps * Int64(player.droppedInterval) * 1000))
    }

    /// Leaves the player's connection through the front for the node's own game URL
    /// (`ws://host:port/path`, loopback only, as every target here), as the browser client
    /// does; false when the URL is not one this generator can reach (it then plays where it is).
    private func moveStraight(_ index: Int, to url: String) -> Bool {
        guard let context, let (host, port, path) = Self.loopbackGameURL(url) else { return false }
        let target = straightTargets[url] ?? context.clientTarget(address: host, port: port, host: "\(host):\(port)", path: path,
                                                                  subprotocol: "retrorapid.v1", sources: options.sourceAddresses)
        straightTargets[url] = target
        players[index].straight = true
        // The old connection is forgotten first, so its close reaches no player.
        if let old = players[index].wsi {
            old.userPointer = nil
            old.closeOnNextTurn()
        }
        players[index].wsi = nil
        players[index].outgoing = []
        statistics.wholeRun.movedStraight += 1
        connect(index, to: target)
        return true
    }

    /// `ws://HOST:PORT/PATH` with a loopback numeric host; nil for anything else.
    static func loopbackGameURL(_ url: String) -> (host: String, port: Int, path: String)? {
        guard url.hasPrefix("ws://") else { return nil }
        let rest = url.dropFirst(5)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        let host = String(authority[..<colon])
        guard LoadTestOptions.isLoopback(host) else { return nil }
        return (host, port, slash == rest.endIndex ? "/" : String(rest[slash...]))
    }

    // MARK: - Callbacks (service thread)

    func established(_ index: Int, wsi: LWSConnection) {
        players[index].wsi = wsi
        players[index].outgoing.insert(.hello)
        wsi.requestWriteable()
    }

    func closed(_ index: Int, code: Int?, failedToConnect: Bool) {
        let wasOpen = players[index].state != .closed && players[index].state != .waiting
        let wasPlaying = players[index].state == .playing
        setState(index, .closed)
        players[index].wsi = nil
        scheduler.cancel(index)
        if options.steps != nil { markBoundedPlayerDone(index) }
        if options.reconnect, phase != .finished { reconnectLater(index, wasPlaying: wasPlaying, failedToConnect: failedToConnect) }
        guard wasOpen, phase != .finished else { return }
        if failedToConnect {
            statistics.connectFailures += 1
        } else {
            statistics.disconnects[code ?? 1006, default: 0] += 1
        }
    }

    func received(_ index: Int, _ bytes: UnsafeRawBufferPointer, isFinal: Bool) {
        if !isFinal || !players[index].partial.isEmpty {
            players[index].partial.append(contentsOf: bytes)
            guard isFinal else { return }
            let whole = players[index].partial
            players[index].partial = []
            whole.withUnsafeBytes { handle(index, MessageScanner($0)) }
        } else {
            handle(index, MessageScanner(bytes))
        }
    }

    private func handle(_ index: Int, _ message: MessageScanner) {
        let now = MonotonicClock.now()
        if seating.isWatcher(index) {
            watcherReceived(index, message, now: now)
            return
        }
        statistics.messagesReceived += 1
        statistics.bytesReceived += message.bytes.count
        switch message.kind {
        case .welcome:
            if options.followGameURL, !players[index].straight, let url = message.string("gameUrl"), moveStraight(index, to: url) {
                return
            }
            setState(index, .lobby)
            if message.hasObject("resumable") {
                // A game of this player's waits (an earlier run's): play it rather than be refused.
                players[index].outgoing.insert(.resume)
                setState(index, .starting)
                if let wsi = players[index].wsi { wsi.requestWriteable() }
            } else if isRace {
                enterRoom(index, now: now)
            } else if !options.idle {
                // Spread first starts over one step so the server's steps are spread too.
                let delay = players[index].bot.spread(below: interval)
                plan(index, .start, at: now + Int64(delay) * 1000)
            }
        case .started, .snapshot:
            if message.kind == .snapshot, players[index].droppedAt > 0 { tookBack(index, message, now: now) }
            if message.kind == .started { players[index].droppedAt = 0 }  // a new game: the old one was not taken back
            setState(index, .playing)
            players[index].lane = message.integer("lane") ?? 1
            players[index].lastStep = 0
            players[index].lastStepAt = now
            players[index].lastInterval = message.integer("interval") ?? interval
            if message.kind == .started { statistics.gamesStarted += 1 }
            if isRace { raceGameStarted(index) }
            if hasWatchers, !isRace, message.kind == .started, let id = message.string("gameId") {
                gameIds[index] = Array(id.utf8)
            }
            if options.steps == 0 { askToQuit(index) }
        case .step:
            stepArrived(index, message, now: now)
        case .moved, .bump:
            if let lane = message.integer("lane") { players[index].lane = lane }
            answerArrived(index, now: now)
        case .crash:
            statistics.crashes += 1
        case .gameOver where isRace:
            statistics.gamesEnded += 1
            players[index].moveSentAt = 0
            raceGameOver(index, now: now)
        case .gameOver:
            statistics.gamesEnded += 1
            if message.occurrences(of: "\"saved\":true") > 0 { statistics.wholeRun.gamesSaved += 1 }
            setState(index, .lobby)
            players[index].moveSentAt = 0
            if options.steps != nil {
                // A bounded test plays one game a player, however it ended.
                players[index].plan = .none
                players[index].boundedGameDone = true
                markBoundedPlayerDone(index)
                return
            }
            plan(index, .start, at: now + Int64(players[index].bot.thinkTime()) * 1000)
        case .error:
            statistics.serverErrors[message.string("code") ?? "unknown", default: 0] += 1
            statistics.wholeRun.serverErrors[message.string("code") ?? "unknown", default: 0] += 1
            answerArrived(index, now: now, counts: false)
            if isRace { raceRefused(index, message, now: now) }
            if players[index].state == .starting {
                setState(index, .lobby)
                if message.string("code") == "game_in_progress" {
                    // Its game runs elsewhere or waits: take it back.
                    players[index].outgoing.insert(.resume)
                    setState(index, .starting)
                    if let wsi = players[index].wsi { wsi.requestWriteable() }
                } else {
                    // A refused start (no plays left, …): try again later rather than hammer.
                    plan(index, .start, at: now + 5_000_000)
                }
            }
        case .room, .roomLeft, .countdown, .standings, .raceOver:
            racerReceived(index, message, now: now)
        case .stepRevised, .pong, .watching, .watchEnded, .other:
            break
        }
    }

    private func stepArrived(_ index: Int, _ message: MessageScanner, now: Int64) {
        statistics.stepFrames += 1
        statistics.stepFrameBytes += message.bytes.count
        guard let step = message.integer("step") else { return }
        let safeLanes = message.laneSet("safeLanes") ?? 0
        if let lane = message.integer("lane") { players[index].lane = lane }
        var player = players[index]
        defer { players[index] = player }
        guard step > player.lastStep else { return }  // a revised step: same time as the first
        // The crash step is held back for the grace window on purpose: not jitter.
        if step == player.lastStep + 1, safeLanes != 0, player.lastStepAt > 0 {
            let gap = now - player.lastStepAt
            let expected = Int64(player.lastInterval) * 1000
            statistics.stepJitters.append(UInt32(clamping: abs(gap - expected)))
        }
        let firstOfGame = player.lastStep == 0
        player.lastStep = step
        player.lastStepAt = now
        player.lastInterval = message.integer("interval") ?? player.lastInterval
        if hasWatchers { stepRecorded(index, step: step, now: now, firstOfGame: firstOfGame) }
        guard !player.boundedGameDone else { return }  // quit asked: no more moves
        if let bound = options.steps, step >= bound {
            players[index] = player
            askToQuit(index)
            player = players[index]
            return
        }
        switch player.bot.decide(lane: player.lane, safeLanes: safeLanes, intervalMilliseconds: player.lastInterval) {
        case .stay:
            if case .move = player.plan { player.plan = .none }
        case .move(let direction, let delay):
            player.plan = .move(direction)
            scheduler.schedule(index, at: now + Int64(delay) * 1000)
        }
    }

    /// Counts a bounded test's player as done once: its game ended, or it closed.
    private func markBoundedPlayerDone(_ index: Int) {
        guard !players[index].boundedCounted else { return }
        players[index].boundedCounted = true
        boundedPlayersDone += 1
    }

    /// A bounded test's game has had its steps: quit it, with no move after.
    private func askToQuit(_ index: Int) {
        guard !players[index].boundedGameDone else { return }
        players[index].boundedGameDone = true
        players[index].plan = .none
        players[index].outgoing.remove(.move)
        players[index].outgoing.insert(.quit)
        scheduler.cancel(index)
        players[index].wsi?.requestWriteable()
    }

    /// A `moved`, `bump` or `error` came: the answer to the outstanding move, if one is.
    private func answerArrived(_ index: Int, now: Int64, counts: Bool = true) {
        let sentAt = players[index].moveSentAt
        guard sentAt > 0 else { return }
        players[index].moveSentAt = 0
        if counts { statistics.inputLatencies.append(UInt32(clamping: now - sentAt)) }
    }

    func plan(_ index: Int, _ plan: VirtualPlayer.Plan, at deadline: Int64) {
        players[index].plan = plan
        scheduler.schedule(index, at: deadline)
    }

    /// Writes the player's most urgent waiting message; asks for another turn if more wait.
    func writeable(_ index: Int, wsi: LWSConnection) -> Int32 {
        var player = players[index]
        var startWritten = false
        defer {
            players[index] = player
            if startWritten { setState(index, .starting) }
        }
        let buffer = sendBuffers + index * sendBufferStride
        let payload = buffer + LWSConnection.headroom
        var writer = MessageWriter(payload, capacity: Self.sendBufferPayload)
        if player.outgoing.contains(.hello) {
            player.outgoing.remove(.hello)
            writer.append("{\"type\":\"hello\",\"client\":\"retrorapid loadtest\",\"token\":\"")
            writer.append(bytes: tokens[index])
            writer.append("\"}")
        } else if player.outgoing.contains(.resume) {
            player.outgoing.remove(.resume)
            writer.append("{\"type\":\"resume\"}")
        } else if player.outgoing.contains(.start) {
            player.outgoing.remove(.start)
            startWritten = true
            writer.append("{\"type\":\"start\",\"level\":\"")
            writer.append(options.level)
            writer.append("\"}")
        } else if player.outgoing.contains(.quit) {
            player.outgoing.remove(.quit)
            writer.append("{\"type\":\"quit\"}")
        } else if player.outgoing.contains(.move) {
            player.outgoing.remove(.move)
            writer.append(player.pendingMove.direction == .left
                          ? "{\"type\":\"move\",\"direction\":\"left\",\"step\":"
                          : "{\"type\":\"move\",\"direction\":\"right\",\"step\":")
            writer.append(integer: player.pendingMove.step)
            writer.append("}")
            player.moveSentAt = MonotonicClock.now()
            statistics.movesSent += 1
        } else if player.outgoing.contains(.openRoom) {
            player.outgoing.remove(.openRoom)
            PlayTogetherMessages.openRoom(&writer, level: options.level, seats: options.roomSeats)
        } else if player.outgoing.contains(.joinRoom) {
            player.outgoing.remove(.joinRoom)
            PlayTogetherMessages.joinRoom(&writer, code: roomCodes[seating.room(of: index)])
        } else if player.outgoing.contains(.ready) {
            player.outgoing.remove(.ready)
            PlayTogetherMessages.ready(&writer)
        } else if player.outgoing.contains(.startRace) {
            player.outgoing.remove(.startRace)
            PlayTogetherMessages.startRace(&writer)
        } else if player.outgoing.contains(.watch) {
            player.outgoing.remove(.watch)
            let target = seating.target(ofWatcher: index)
            if isRace {
                PlayTogetherMessages.watch(&writer, room: roomCodes[seating.room(of: target)], seat: players[target].seat)
            } else {
                PlayTogetherMessages.watch(&writer, gameId: gameIds[target])
            }
        } else {
            return 0
        }
        guard !writer.overflowed else { return -1 }  // cannot happen with 43-character tokens and our codes and ids
        let written = wsi.write(payload.assumingMemoryBound(to: UInt8.self), count: writer.count, .text)
        guard written >= writer.count else { return -1 }
        statistics.messagesSent += 1
        if !player.outgoing.isEmpty { wsi.requestWriteable() }
        return 0
    }

    /// Someone woke the loop (only `finish` does): leave it.
    func serviceWoken() {
        if phase == .finished { context?.stopLoop() }
    }

    // MARK: - Timer (service thread)

    private func due(_ id: Int, now: Int64) {
        if id == controlID {
            control(now: now)
            return
        }
        if case .reconnect = players[id].plan {
            players[id].plan = .none
            guard phase != .finished, players[id].state == .closed else { return }
            players[id].straight = false
            players[id].outgoing = []
            players[id].partial = []
            return connect(id)
        }
        guard let wsi = players[id].wsi else { return }
        switch players[id].plan {
        case .none, .reconnect:
            return
        case .start:
            guard players[id].state == .lobby, phase != .finished else { return }
            players[id].outgoing.insert(.start)
        case .move(let direction):
            guard players[id].state == .playing, players[id].moveSentAt == 0 else { return }
            players[id].pendingMove = (direction, players[id].lastStep)
            players[id].outgoing.insert(.move)
        case .openRoom, .joinRoom, .ready, .watch:
            let planned = players[id].plan
            players[id].plan = .none
            guard phase != .finished, let message = playTogetherDue(id, planned, now: now) else { return }
            players[id].outgoing.insert(message)
        }
        players[id].plan = .none
        wsi.requestWriteable()
    }

    /// Every 10 ms: the ramp, the phases, the progress line.
    private func control(now: Int64) {
        if Self.interruptRequested.load(ordering: .relaxed), phase != .finished {
            interrupted = true
            if phase == .holding { endHold(now: now) }
            finish()
            return
        }
        let elapsed = now - phaseStartedAt
        switch phase {
        case .ramping:
            let allowed = min(players.count, Int(Double(elapsed) / 1_000_000 * Double(options.rampPerSecond)) + 1)
            var connecting = connectingCount
            while nextToConnect < allowed, connecting < Self.maximumConnecting {
                connect(nextToConnect)
                nextToConnect += 1
                connecting += 1
            }
            // A ramp that cannot complete (refusals, a slow server) moves on after three times
            // its planned length plus 30 s; the report shows how many connected.
            let planned = Int64(players.count) * 1_000_000 / Int64(options.rampPerSecond)
            if (nextToConnect == players.count && connectingCount == 0) || elapsed > 3 * planned + 30_000_000 {
                progress("ramp done: \(signedInCount) of \(players.count) signed in after \(Self.seconds(elapsed)) s")
                if options.steps != nil {
                    startHold(now: now)  // a bounded test: no settle, the whole run counts
                } else {
                    enter(.settling, now: now)
                }
            }
        case .settling:
            if elapsed >= Int64(options.settleSeconds) * 1_000_000 {
                startHold(now: now)
            }
        case .holding where options.steps != nil:
            // Done when every player that signed in has had its game; one the ramp gave up on
            // (never signed in) plays none, and the report's counts show it.
            let neverSignedIn = stateCounts[VirtualPlayer.State.connecting.rawValue] + stateCounts[VirtualPlayer.State.waiting.rawValue]
            if boundedPlayersDone + neverSignedIn == players.count || elapsed >= Int64(options.holdSeconds) * 1_000_000 {
                if boundedPlayersDone + neverSignedIn < players.count {
                    interrupted = true  // out of time: the report covers the games that ran
                    progress("--hold-seconds reached with \(players.count - boundedPlayersDone - neverSignedIn) games not over")
                }
                endHold(now: now)
                finish()
                return
            }
        case .holding:
            if elapsed >= Int64(options.holdSeconds) * 1_000_000 {
                endHold(now: now)
                finish()
                return
            }
        case .finished:
            return
        }
        peakConnections = max(peakConnections, signedInCount)
        if now - lastProgressAt >= Self.progressEveryMicroseconds {
            lastProgressAt = now
            progress("\(phase): \(signedInCount) signed in, \(playingCount) playing, \(statistics.stepFrames) steps, "
                     + "\(statistics.errorCount) errors, \(statistics.disconnectCount) disconnects" + playTogetherProgress)
        }
        scheduler.schedule(controlID, at: now + Self.controlTickMicroseconds)
    }

    private func enter(_ next: Phase, now: Int64) {
        phase = next
        phaseStartedAt = now
    }

    private func startHold(now: Int64) {
        // Only the window is measured: the ramp's handshakes and first games are left out
        // (the whole run's counts stay; a bounded test measures the whole run).
        holdStartedAt = now
        serverAtHoldStart = options.serverPID.flatMap { ProcessSampler.sample(pid: $0, at: now) }
        selfAtHoldStart = ProcessSampler.sample(pid: getpid(), at: now)
        if options.steps == nil {
            let wholeRun = statistics.wholeRun
            statistics = LoadStatistics()
            statistics.wholeRun = wholeRun
        }
        progress("measuring for \(options.holdSeconds) s with \(signedInCount) signed in, \(playingCount) playing" + playTogetherProgress)
        enter(.holding, now: now)
    }

    private func endHold(now: Int64) {
        holdEndedAt = now
        serverAtHoldEnd = options.serverPID.flatMap { ProcessSampler.sample(pid: $0, at: now) }
        selfAtHoldEnd = ProcessSampler.sample(pid: getpid(), at: now)
        connectionsAtHoldEnd = signedInCount
        gamesAtHoldEnd = playingCount
        watchingAtHoldEnd = watchingCount
    }

    private func finish() {
        phase = .finished
        context?.waker.wake()
    }

    /// Players in each state, kept as states change (counting the array every 10 ms cost the
    /// load generator a fifth of its core at 20,000 players).
    private var stateCounts: [Int] = []

    func setState(_ index: Int, _ state: VirtualPlayer.State) {
        stateCounts[players[index].state.rawValue] -= 1
        stateCounts[state.rawValue] += 1
        players[index].state = state
    }

    func stateCount(_ state: VirtualPlayer.State) -> Int { stateCounts[state.rawValue] }

    private var connectingCount: Int { stateCounts[VirtualPlayer.State.connecting.rawValue] }
    private var playingCount: Int { stateCounts[VirtualPlayer.State.playing.rawValue] }
    private var inRoomCount: Int { stateCounts[VirtualPlayer.State.inRoom.rawValue] }
    private var watchingCount: Int { stateCounts[VirtualPlayer.State.watching.rawValue] }
    private var signedInCount: Int {
        stateCounts[VirtualPlayer.State.lobby.rawValue] + stateCounts[VirtualPlayer.State.starting.rawValue] + playingCount
            + inRoomCount + watchingCount
    }

    static func seconds(_ microseconds: Int64) -> String {
        String(format: "%.1f", Double(microseconds) / 1_000_000)
    }

    private func makeReport() -> LoadReport {
        LoadReport(
            options: options, statistics: statistics, interrupted: interrupted,
            measuredSeconds: holdEndedAt > holdStartedAt ? Double(holdEndedAt - holdStartedAt) / 1_000_000 : 0,
            connectionsHeld: connectionsAtHoldEnd, peakConnections: peakConnections, gamesRunning: gamesAtHoldEnd,
            serverBeforeRamp: serverBeforeRamp, serverAtHoldStart: serverAtHoldStart, serverAtHoldEnd: serverAtHoldEnd,
            selfAtHoldStart: selfAtHoldStart, selfAtHoldEnd: selfAtHoldEnd, watchersWatching: watchingAtHoldEnd)
    }
}

/// The client protocol's callback. Threading rule: runs on the `LoadGenerator`'s service thread
/// (inside the libev loop `run()` runs), like every libwebsockets callback; its owner is the
/// generator, and it finds the player through the connection's opaque user data (index + 1,
/// set at connect).
private func loadClientCallback(_ owner: UnsafeMutableRawPointer, _ wsi: LWSConnection, _ reason: LWSCallbackReason,
                                _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?,
                                _ length: Int) -> Int32 {
    let generator = Unmanaged<LoadGenerator>.fromOpaque(owner).takeUnretainedValue()
    if reason == .eventWaitCancelled {
        generator.serviceWoken()
        return 0
    }
    let tag = wsi.opaqueUserData
    guard tag > 0, tag <= generator.players.count else { return 0 }
    let index = tag - 1
    switch reason {
    case .clientEstablished:
        generator.established(index, wsi: wsi)
    case .clientReceive:
        guard let input else { return 0 }
        generator.received(index, UnsafeRawBufferPointer(start: input, count: length), isFinal: wsi.isFinalFragment)
    case .clientWriteable:
        return generator.writeable(index, wsi: wsi)
    case .peerInitiatedClose:
        // The close code is the payload's first two bytes, big-endian.
        if let input, length >= 2 {
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            generator.peerCloseCodes[index] = Int(bytes[0]) << 8 | Int(bytes[1])
        }
    case .clientConnectionError:
        generator.closed(index, code: nil, failedToConnect: true)
    case .clientClosed:
        generator.closed(index, code: generator.peerCloseCodes.removeValue(forKey: index), failedToConnect: false)
    default:
        break
    }
    return 0
}
