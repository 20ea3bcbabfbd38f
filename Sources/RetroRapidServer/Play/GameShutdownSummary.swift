/// What `WebSocketHub.endAllGames` did (counted by the `GameRecorder`).
public struct GameShutdownSummary: Sendable, Equatable {
    /// Games saved with their score.
    public var saved: Int
    /// Games the database refused or failed to save (logged).
    public var failed: Int
}
