import CLibWebSockets
import RetroRapidLWS
import Foundation
import RetroRapidRules
import RetroRapidDomain

/// The hub's games: starting them, stepping them on the tick timer, delivering what they say,
/// saving them when they end, and ending them all on shutdown. Service thread.
extension WebSocketHub {
    /// The game's seed is chosen before it starts: its `running_games` row, written with the
    /// play it consumes, holds it (`newGameSeed`).
    func startSession(gameID: String, playerID: Int64, level: SpeedLevel, seed: UInt64, practice: Bool) -> GameSession {
        let session = GameSession(
            id: nextID(), gameID: gameID, playerID: playerID, level: level,
            seed: seed, practice: practice,
            graceLimitMilliseconds: limits.latencyGraceMilliseconds, startedAt: Date(), now: MonotonicClock.now())
        sessions[session.id] = session
        sessionByPlayer[playerID] = session.id
        metrics.gamesRunning.set(Double(sessions.count))
        reschedule(session)
        logger.info("game started", metadata: [
            "game.id": gameID, "game.level": level.rawValue, "game.practice": String(practice)])
        return session
    }

    /// A game's seed: any of the 2^64 roads.
    static func newGameSeed() -> UInt64 {
        UInt64.random(in: .min ... .max)
    }

    /// A practice game's `running_games` row (a ranked game's is written with its play before
    /// it starts). The game does not wait for it: queued first, it is written before any
    /// checkpoint or save of the game.
    func recordPracticeStart(_ session: GameSession) {
        let start = (gameID: session.gameID, playerID: session.playerID, level: session.game.state.level,
                     seed: session.game.seed)
        worker.perform({ storage in
            try storage.runningGames.begin(RunningGameStart(
                publicID: start.gameID, playerID: start.playerID, level: start.level, seed: start.seed, practice: true,
                startedAt: storage.now))
        }, then: { [self] result in
            if case .failure(let error) = result {
                logger.warning("could not record a practice game as running; a crash would lose it", metadata: [
                    "game.id": start.gameID, "error": "\(error)"])
            }
        })
    }

    /// A game whose play was taken but which never started (the server began stopping
    /// meanwhile): its row goes and its play comes back.
    func cancelStart(gameID: String) {
        worker.perform({ storage in try storage.runningGames.cancel(publicID: gameID) }, then: { [self] result in
            if case .failure(let error) = result {
                logger.error("could not give back the play of a game that never started", metadata: [
                    "game.id": gameID, "error": "\(error)"])
            }
        })
    }

    func attach(_ session: GameSession, to connection: WebSocketConnection) {
        sessionConnection[session.id] = connection
        connection.sessionID = session.id
        connection.lastEndedGameID = nil
        refreshIdleTimeout(connection)
    }

    /// Sets the session's one timer entry to when it next needs a tick (or none).
    func reschedule(_ session: GameSession) {
        if let wake = session.wakeAt {
            scheduler.schedule(session.id, at: wake)
        } else {
            scheduler.cancel(session.id)
        }
    }

    /// The tick timer says `id` is due.
    func timerDue(_ id: Int, now: Int64) {
        if id == Self.shutdownTimerID {
            completeShutdown()
            return
        }
        if id == Self.checkpointTimerID {
            checkpointDue(now: now)
            return
        }
        guard let session = sessions[id] else { return }
        let stepBefore = session.game.state.step
        let output = session.tick(now: now)
        if session.game.state.step > stepBefore { metrics.stepTaken(lateMicroseconds: session.lastStepLateness) }
        deliver(output, of: session)
    }

    /// Sends a session's messages to its connection, then either saves it (it ended) or sets
    /// its next tick.
    func deliver(_ output: GameSession.Output, of session: GameSession) {
        let connection = sessionConnection[session.id]
        if let connection {
            for message in output.messages { send(message, to: connection) }
        }
        if let reason = output.ended {
            finish(session, reason: reason, connection: connection)
        } else {
            reschedule(session)
            if let connection, output.messages.contains(where: Self.changesIdleness) { refreshIdleTimeout(connection) }
        }
    }

    /// Pausing starts the idle clock and resuming stops it; steps do not touch it.
    private static func changesIdleness(_ message: ServerMessage) -> Bool {
        switch message {
        case .paused, .resumed: true
        default: false
        }
    }

    // MARK: - The end of a game

    /// Forgets the game and saves it on the storage thread; its `gameOver` goes to the player
    /// once the database has answered (with the personal best, rank and plays left). The same
    /// transaction deletes its `running_games` row, so the crash recovery never stores it again.
    private func finish(_ session: GameSession, reason: GameEndReason, connection: WebSocketConnection?) {
        scheduler.cancel(session.id)
        sessions[session.id] = nil
        sessionConnection[session.id] = nil
        if sessionByPlayer[session.playerID] == session.id { sessionByPlayer[session.playerID] = nil }
        metrics.gamesRunning.set(Double(sessions.count))
        metrics.gamesEnded.increment(reason.rawValue)
        if let connection {
            connection.sessionID = nil
            connection.lastEndedGameID = session.gameID
            refreshIdleTimeout(connection)
        }
        let game = session.record(endedAt: Date())
        let gameID = session.gameID
        let connectionID = connection?.id
        savesInFlight += 1
        worker.perform({ storage -> (RecordedGame, QuotaStatus?) in
            let recorded = try storage.games.record(game)
            let quota = try? storage.quota.status(playerID: game.playerID, now: storage.now)
            return (recorded, quota)
        }, then: { [self] result in
            saved(result, game: game, gameID: gameID, connectionID: connectionID)
        })
    }

    private func saved(_ result: Result<(RecordedGame, QuotaStatus?), any Error>, game: NewGame, gameID: String,
                       connectionID: Int?) {
        defer { metrics.flush() }
        savesInFlight -= 1
        var summary = ServerMessage.GameResult(
            gameID: gameID, reason: game.endReason, score: game.score, steps: game.steps, practice: game.practice,
            saved: false, standings: [], quota: nil)
        switch result {
        case .success(let (recorded, quota)):
            summary.saved = true
            summary.standings = recorded.standings
            summary.quota = quota
            shutdown?.saved += 1
            logger.info("game saved", metadata: [
                "game.id": gameID, "game.score": String(game.score), "game.steps": String(game.steps),
                "game.end": game.endReason.rawValue])
        case .failure(let error):
            shutdown?.failed += 1
            logger.error("could not save a game", metadata: [
                "game.id": gameID, "game.score": String(game.score), "error": "\(error)"])
        }
        if let connectionID, let connection = connections[connectionID] {
            send(.gameOver(summary), to: connection)
        }
        if savesInFlight == 0, shutdown != nil { closeEveryConnection() }
    }

    // MARK: - Shutdown

    func beginShutdown(reason: GameEndReason, completion: @escaping @Sendable (GameShutdownSummary) -> Void) {
        assertOnServiceThread()
        guard shutdown == nil else {
            // Asked twice: the second caller hears when the first shutdown is done.
            let first = shutdown!.completion
            shutdown!.completion = { summary in first(summary); completion(summary) }
            return
        }
        shuttingDown = true
        shutdown = ShutdownProgress(completion: completion)
        let now = MonotonicClock.now()
        for session in Array(sessions.values).sorted(by: { $0.id < $1.id }) {
            deliver(session.end(reason, now: now), of: session)
        }
        logger.notice("ending every game for shutdown", metadata: ["games.saving": String(savesInFlight)])
        if savesInFlight == 0 { closeEveryConnection() }
        metrics.flush()
    }

    /// Every game is saved: say goodbye (1001) after what is queued, and finish when the
    /// clients have gone or the flush time is up.
    private func closeEveryConnection() {
        guard var progress = shutdown, !progress.closing else { return }
        progress.closing = true
        shutdown = progress
        for connection in connections.values {
            connection.close(.init(code: ProtocolError.Close.goingAway, reason: "server restarting; games were saved"))
        }
        if connections.isEmpty {
            completeShutdown()
        } else {
            scheduler.schedule(Self.shutdownTimerID, at: MonotonicClock.now() + Self.shutdownFlushMicroseconds)
        }
    }

    func completeShutdown() {
        guard let progress = shutdown, progress.closing else { return }
        shutdown = nil
        scheduler.cancel(Self.shutdownTimerID)
        progress.completion(GameShutdownSummary(saved: progress.saved, failed: progress.failed))
    }
}
