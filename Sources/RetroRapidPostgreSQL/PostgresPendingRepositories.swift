import Foundation
import RetroRapidDomain
import RetroRapidRules

// Being ported from RetroRapidSQLite on other branches; each struct here is deleted when its
// real file lands. Never merged to main.
struct PostgresQuotaRepository: QuotaRepository {
    let connection: PostgresConnection
    let dailyFreePlays: Int
    func status(playerID: Int64, now: Date) throws -> QuotaStatus { preconditionFailure("pending") }
    func consumePlay(playerID: Int64, gameID: String?, now: Date) throws -> QuotaStatus { preconditionFailure("pending") }
}
struct PostgresGameRepository: GameRepository {
    let connection: PostgresConnection
    func record(_ game: NewGame) throws -> RecordedGame { preconditionFailure("pending") }
    func game(id: Int64) throws -> GameRecord? { preconditionFailure("pending") }
    func game(publicID: String) throws -> GameRecord? { preconditionFailure("pending") }
    func games(playerID: Int64, limit: Int, before: Int64?) throws -> [GameRecord] { preconditionFailure("pending") }
    func forEachGame(afterID: Int64, batchSize: Int, _ body: (GameRecord) throws -> Void) throws { preconditionFailure("pending") }
}
struct PostgresRunningGameRepository: RunningGameRepository {
    let connection: PostgresConnection
    let dailyFreePlays: Int
    func begin(_ game: RunningGameStart) throws -> QuotaStatus? { preconditionFailure("pending") }
    func cancel(publicID: String) throws -> Bool { preconditionFailure("pending") }
    func checkpoint(_ batch: [GameCheckpoint], compacting: Bool, now: Date) throws { preconditionFailure("pending") }
    func running() throws -> [RunningGameRecord] { preconditionFailure("pending") }
    func running(playerID: Int64) throws -> [RunningGameRecord] { preconditionFailure("pending") }
    func running(publicID: String) throws -> RunningGameRecord? { preconditionFailure("pending") }
    func recoverAll(now: Date) throws -> [RecoveredGame] { preconditionFailure("pending") }
}
struct PostgresLeaderboardRepository: LeaderboardRepository {
    let connection: PostgresConnection
    func top(level: SpeedLevel, period: LeaderboardPeriod, limit: Int, after cursor: LeaderboardCursor?, now: Date) throws -> LeaderboardPage { preconditionFailure("pending") }
    func aroundMe(playerID: Int64, level: SpeedLevel, period: LeaderboardPeriod, neighbours: Int, now: Date) throws -> LeaderboardNeighbourhood? { preconditionFailure("pending") }
}
