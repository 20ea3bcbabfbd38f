import Foundation
import RetroRapidDomain
import RetroRapidSupport

/// What the game side writes about a game's life on the storage thread, besides its start and
/// checkpoints: a practice game's `running_games` row, the row of a ranked game that never
/// started (its play given back), and every finished game, whose `gameOver` goes out only once
/// the database has answered. During a shutdown it counts what was saved and what failed, for
/// the summary `WebSocketHub.endAllGames` reports.
///
/// Threading rule: built by the `WebSocketHub` and used by the `MatchHost` (and by the race
/// rooms and replays, for their starts) on the libwebsockets service thread; its jobs run on
/// the storage thread (`DatabaseWorker`) and their completions come back to the service
/// thread through the mailbox, where everything here is touched.
///
/// Ordering rule: every job is keyed by the game's player (`perform(orderedBy:)`), like the
/// ranked start in `MatchHost` and the `CheckpointWriter`'s share of the game, so a game's
/// start, checkpoints, cancel and record run in the order submitted, on one storage thread,
/// however many there are. Keyed jobs waiting together are committed in one transaction
/// (group commit, `DatabaseWorker`), and each completion, `gameOver` included, comes only after
/// that commit.
final class GameRecorder: @unchecked Sendable {
    // @unchecked: the mutable state is confined to the service thread (see above), where the
    // worker's completions run.

    let worker: DatabaseWorker
    let connections: ConnectionRegistry
    let metrics: WebSocketMetrics
    let logger: Logger
    /// Called when the last save in flight is done while a shutdown is being counted.
    var onAllSaved: () -> Void = {}

    /// Games handed to the storage thread and not saved yet.
    private(set) var savesInFlight = 0
    /// Saved and failed games since `startCounting`; nil when no shutdown is under way.
    private var tally: GameShutdownSummary?

    init(worker: DatabaseWorker, connections: ConnectionRegistry, metrics: WebSocketMetrics, logger: Logger) {
        self.worker = worker
        self.connections = connections
        self.metrics = metrics
        self.logger = logger
    }

    // MARK: - Rows of running games

    /// A practice game's `running_games` row (a ranked game's is written with its play before
    /// it starts). The game does not wait for it: queued first, it is written before any
    /// checkpoint or save of the game.
    func recordPracticeStart(_ session: GameSession, seed: UInt64) {
        let start = (gameID: session.gameID, playerID: session.playerID, level: session.game.state.level,
                     seed: seed)
        worker.perform(orderedBy: start.playerID, { storage in
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
    func cancelStart(gameID: String, playerID: Int64) {
        worker.perform(orderedBy: playerID, { storage in try storage.runningGames.cancel(publicID: gameID) }, then: { [self] result in
            if case .failure(let error) = result {
                logger.error("could not give back the play of a game that never started", metadata: [
                    "game.id": gameID, "error": "\(error)"])
            }
        })
    }

    // MARK: - Finished games

    /// Saves a finished game on the storage thread; its `gameOver` (with the personal best,
    /// rank and plays left) goes to connection `connectionID`, if it is still open, once the
    /// database has answered. The same transaction deletes its `running_games` row, so the
    /// crash recovery never stores it again.
    func save(_ session: GameSession, replyingTo connectionID: Int?) {
        let game = session.record(endedAt: Date())
        let gameID = session.gameID
        savesInFlight += 1
        worker.perform(orderedBy: game.playerID, { storage -> (RecordedGame, QuotaStatus?) in
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
            summary.daily = recorded.daily
            summary.quota = quota
            tally?.saved += 1
            logger.info("game saved", metadata: [
                "game.id": gameID, "game.score": String(game.score), "game.steps": String(game.steps),
                "game.end": game.endReason.rawValue])
        case .failure(let error):
            tally?.failed += 1
            logger.error("could not save a game", metadata: [
                "game.id": gameID, "game.score": String(game.score), "error": "\(error)"])
        }
        if let connectionID, let connection = connections[connectionID] {
            connections.send(.gameOver(summary), to: connection)
        }
        if savesInFlight == 0, tally != nil { onAllSaved() }
    }

    // MARK: - The shutdown's summary

    /// From now on every save is counted, until `finishCounting`.
    func startCounting() {
        tally = GameShutdownSummary(saved: 0, failed: 0)
    }

    /// What was saved and what failed since `startCounting`; counting stops.
    func finishCounting() -> GameShutdownSummary {
        defer { tally = nil }
        return tally ?? GameShutdownSummary(saved: 0, failed: 0)
    }
}
