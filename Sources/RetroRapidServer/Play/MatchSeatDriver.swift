/// What drives a seat of a match: the player's `GameSession`, or (later) a re-simulated
/// stored game. The `MatchHost` only schedules, ticks and fans out what a driver says; it
/// needs nothing else of it.
///
/// Why a protocol and not an enum: a new kind of driver is one line (`extension
/// ReplaySession: MatchSeatDriver {}`), and the host's hot path does not grow a switch. What
/// only a player's game has (moves, pause, checkpoints, the record) the host reaches through
/// `MatchSeat.session`, set once when the seat is made.
///
/// Threading rule: service thread only, like the `Match` that holds it.
protocol MatchSeatDriver: AnyObject {
    /// When the driver next needs a tick (monotonic µs), nil while it waits for nothing
    /// (paused, over).
    var wakeAt: Int64? { get }
    /// What is due by `now`: the messages for the seat's receivers, and whether it ended.
    func tick(now: Int64) -> GameSession.Output
    /// The whole picture, for a receiver that joins late.
    var snapshot: ServerMessage.GameSnapshot { get }
    /// The game's public id.
    var gameID: String { get }
    var isOver: Bool { get }
}

extension GameSession: MatchSeatDriver {}
