import Foundation

/// Finished games and, through them, the leaderboards. ``record(_:)`` is the one writer: the
/// game and its scores on the player's three boards are one write, so a game is never stored
/// without its scores or the other way round, and what it returns (personal bests, ranks) is
/// what was committed. Refusals are ``StoreError`` and change nothing.
public protocol GameRepository {
    /// Stores a finished game and updates the leaderboards; a game with a public id also stops
    /// being a running game in the same write.
    @discardableResult
    func record(_ game: NewGame) throws -> RecordedGame

    func game(id: Int64) throws -> GameRecord?

    func game(publicID: String) throws -> GameRecord?

    /// A player's games, newest first, `limit` from ``GameRecord/pageSizeRange``, those before
    /// the game id `before` when given.
    func games(playerID: Int64, limit: Int, before: Int64?) throws -> [GameRecord]

    /// Calls `body` with every stored game in id order, starting after `afterID`, reading
    /// `batchSize` at a time so a long walk holds no snapshot open.
    func forEachGame(afterID: Int64, batchSize: Int, _ body: (GameRecord) throws -> Void) throws
}

extension GameRepository {
    public func games(playerID: Int64, limit: Int = 20, before: Int64? = nil) throws -> [GameRecord] {
        try games(playerID: playerID, limit: limit, before: before)
    }

    public func forEachGame(afterID: Int64 = 0, batchSize: Int = 500, _ body: (GameRecord) throws -> Void) throws {
        try forEachGame(afterID: afterID, batchSize: batchSize, body)
    }

    /// Re-simulates every stored game (``GameMismatch/check(_:)``) and returns those that
    /// disagree with what was stored; empty means every stored score is the one its inputs earn.
    /// `progress` gets the number checked so far every 1,000 games and at the end; `visiting`
    /// sees each game as it is checked.
    public func verifyAll(progress: (Int) -> Void = { _ in }, visiting: (GameRecord) -> Void = { _ in }) throws -> [GameMismatch] {
        var mismatches: [GameMismatch] = []
        var checked = 0
        try forEachGame(afterID: 0, batchSize: 500) { game in
            visiting(game)
            if let mismatch = GameMismatch.check(game) { mismatches.append(mismatch) }
            checked += 1
            if checked % 1000 == 0 { progress(checked) }
        }
        progress(checked)
        return mismatches
    }
}
