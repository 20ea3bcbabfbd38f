import RetroRapidLWS
import RetroRapidRules

/// One simulated player: its connection, where its game stands, and what it means to do next.
/// Lives in the `LoadGenerator`'s array and is touched only on its service thread.
struct VirtualPlayer {
    enum State: Int, CaseIterable {
        /// Not connected yet (the ramp has not reached it).
        case waiting
        /// TCP and WebSocket handshakes, then `hello` until `welcome`.
        case connecting
        /// Signed in, no game: about to start one (or idle, in an idle test).
        case lobby
        /// `start` sent, `started` not yet come.
        case starting
        case playing
        /// A racer in its room with no game: waiting for the others to join, get ready, start,
        /// or finish their games of the race.
        case inRoom
        /// A watcher following a game (after `watching`, until `watchEnded`).
        case watching
        /// Closed, by the server, the network or a failed connect; not reopened.
        case closed
    }

    /// What the player's one scheduler deadline is for.
    enum Plan: Equatable {
        case none
        case start
        case move(Direction)
        // Race and watch tests.
        case openRoom
        case joinRoom
        case ready
        case watch
        /// Open a new connection after the last one dropped (`--reconnect`).
        case reconnect
    }

    /// Messages waiting for the next WRITEABLE, in this order of priority.
    struct Outgoing: OptionSet {
        let rawValue: UInt16
        static let hello = Outgoing(rawValue: 1)
        static let start = Outgoing(rawValue: 2)
        static let move = Outgoing(rawValue: 4)
        /// Take back the player's game that waits (left by an earlier run, or a lost connection).
        static let resume = Outgoing(rawValue: 8)
        static let openRoom = Outgoing(rawValue: 16)
        static let joinRoom = Outgoing(rawValue: 32)
        static let ready = Outgoing(rawValue: 64)
        static let startRace = Outgoing(rawValue: 128)
        static let watch = Outgoing(rawValue: 256)
        /// End the game (a bounded test's, after its steps); a high bit, leaving the ones below for other kinds.
        static let quit = Outgoing(rawValue: 512)
    }

    var wsi: LWSConnection?
    var state = State.waiting
    var outgoing: Outgoing = []
    var plan = Plan.none
    var bot: LoadBot
    /// The move waiting to be written, and the step it names.
    var pendingMove: (direction: Direction, step: Int) = (.left, 0)
    /// When the unanswered move was written (monotonic µs); 0 when none is outstanding.
    var moveSentAt: Int64 = 0
    var lane = 1
    /// The last step number seen, when it arrived, and the interval it announced.
    var lastStep = 0
    var lastStepAt: Int64 = 0
    var lastInterval = 0
    /// A racer's seat in its room (`you` of its `room` messages); -1 before it has one.
    var seat = -1
    /// A racer's `ready` for the coming race is written or planned.
    var readyPlanned = false
    /// A host's `startRace` for the coming race is written.
    var startSent = false
    /// When the coming race's first step is due (its `countdown`), monotonic µs; 0 when none.
    var raceStartsAt: Int64 = 0
    /// Bytes of a message that came in several fragments, until its last one.
    var partial: [UInt8] = []
    /// A bounded test's game is over for this player (quit asked, or the game ended): nothing
    /// more is planned or moved.
    var boundedGameDone = false
    /// Counted among the bounded test's finished players (game over, or closed).
    var boundedCounted = false
    /// Connected to the game URL a `welcome` named (`--follow-game-url`), not through the front.
    var straight = false
    /// When the connection dropped (monotonic µs; 0: it has not, or its game came back), the
    /// step its game had reached then (-1: no game was running) and that step's interval.
    var droppedAt: Int64 = 0
    var droppedStep = -1
    var droppedInterval = 0

    init(bot: LoadBot) {
        self.bot = bot
    }
}
