import Foundation

/// A refusal sent to a WebSocket client as `{"type":"error","code":…,"message":…}`.
///
/// Every refusal changes nothing on the server (docs/PROTOCOL.md): the error names what was wrong and
/// what to do. Those that end the connection also carry the close code and a short close
/// reason (a WebSocket close reason must fit in 123 bytes). A struct over a code rather than an
/// enum, so adding a code breaks no caller's `switch` (as `StoreError` does).
struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    struct Code: Hashable, Sendable, CustomStringConvertible {
        let rawValue: String
        var description: String { rawValue }

        // Bad input: the connection stays open.
        /// The message is not JSON at all.
        static let badJSON = Code(rawValue: "bad_json")
        /// JSON, but not an object with a known `type` and the fields that type needs.
        static let badMessage = Code(rawValue: "bad_message")
        static let unknownType = Code(rawValue: "unknown_type")
        /// A message other than `hello` before `hello`, or a second `hello`.
        static let helloFirst = Code(rawValue: "hello_first")
        static let alreadyAuthenticated = Code(rawValue: "already_authenticated")
        static let noGame = Code(rawValue: "no_game")
        static let gameOver = Code(rawValue: "game_over")
        static let gameInProgress = Code(rawValue: "game_in_progress")
        static let startPending = Code(rawValue: "start_pending")
        static let paused = Code(rawValue: "paused")
        static let alreadyPaused = Code(rawValue: "already_paused")
        static let notPaused = Code(rawValue: "not_paused")
        /// A move that names a step the game has not reached (or a negative one).
        static let stepOutOfRange = Code(rawValue: "step_out_of_range")
        static let noPlaysLeft = Code(rawValue: "no_plays_left")
        /// A scored start on today's daily road after the player's one attempt (`resetsAt` says
        /// when the next road comes); practice on it is still free.
        static let dailyPlayed = Code(rawValue: "daily_played")
        static let rateLimited = Code(rawValue: "rate_limited")
        static let shuttingDown = Code(rawValue: "shutting_down")
        /// The database failed; the request may be tried again.
        static let unavailable = Code(rawValue: "unavailable")

        // Race rooms and quick races (docs/PROTOCOL.md "Race rooms").
        static let alreadyInRoom = Code(rawValue: "already_in_room")
        static let notInRoom = Code(rawValue: "not_in_room")
        static let roomNotFound = Code(rawValue: "room_not_found")
        static let roomFull = Code(rawValue: "room_full")
        /// The room is counting down, racing or saving a race: nobody joins, readies or starts.
        static let raceRunning = Code(rawValue: "race_running")
        static let notHost = Code(rawValue: "not_host")
        /// Fewer than 2 racers, or a racer not ready (the message names who).
        static let notReady = Code(rawValue: "not_ready")
        static let tooManyRooms = Code(rawValue: "too_many_rooms")
        static let alreadyInQueue = Code(rawValue: "already_in_queue")
        static let notInQueue = Code(rawValue: "not_in_queue")
        /// A move before the race's start deadline.
        static let notStarted = Code(rawValue: "not_started")
        /// Cluster mode: the room lives on another node (the error carries its `node`).
        static let roomElsewhere = Code(rawValue: "room_elsewhere")
        /// Cluster mode: a race game runs on another node and is not moved while the race runs.
        static let gameElsewhere = Code(rawValue: "game_elsewhere")
        /// Cluster mode: a `resume` or `quit` whose game was on its way here was taken over by a
        /// newer one from another connection of the player's (the newest asks, as on one node).
        static let gameTaken = Code(rawValue: "game_taken")
        /// Cluster mode: a second `resume` or `quit` from a connection whose first is still on
        /// its way: the first one's answer comes.
        static let resumePending = Code(rawValue: "resume_pending")
        // Watching (docs/PROTOCOL.md, "Watching").
        /// No running game has that id, here or on any node, and none was stored.
        static let gameNotFound = Code(rawValue: "game_not_found")
        /// The game has as many watchers as allowed (`--watchers-per-game`), or watching is off.
        static let watchersFull = Code(rawValue: "watchers_full")
        /// The game runs on another node (cluster mode): the error's `node` says which.
        static let watchElsewhere = Code(rawValue: "watch_elsewhere")
        /// `stopWatching` on a connection that watches nothing.
        static let notWatching = Code(rawValue: "not_watching")

        // Replays and ghosts (docs/PROTOCOL.md, "Replays and ghosts").
        /// Another player's game on today's daily road: its replay would give the road away.
        static let replayHidden = Code(rawValue: "replay_hidden")
        /// A stored game this build cannot re-run (another rules version).
        static let notReplayable = Code(rawValue: "not_replayable")

        /// An upgrade on another path than /ws.
        static let notFound = Code(rawValue: "not_found")

        // These end the connection.
        static let unauthorized = Code(rawValue: "unauthorized")
        static let messageTooLarge = Code(rawValue: "message_too_large")
        /// A binary message: the protocol is JSON in text messages only (closed with 1003).
        static let binaryMessage = Code(rawValue: "binary_message")
        static let subprotocolRequired = Code(rawValue: "subprotocol_required")
        static let tooManyConnections = Code(rawValue: "too_many_connections")
        /// An upgrade from a page of another site (`OriginPolicy`), refused with HTTP 403.
        static let originNotAllowed = Code(rawValue: "origin_not_allowed")
        static let flooding = Code(rawValue: "flooding")
        /// `hello` from an address that sent too many tokens that signed nobody in.
        static let tooManyFailedSignIns = Code(rawValue: "too_many_failed_sign_ins")
        /// No `hello` within the hello timeout of connecting.
        static let helloTimeout = Code(rawValue: "hello_timeout")
        /// No message for the idle timeout while no game ran on the connection.
        static let idleTimeout = Code(rawValue: "idle_timeout")
    }

    /// How the connection ends after the error, when it must.
    struct Close: Equatable, Sendable {
        /// A WebSocket close status: 1001 going away, 1003 binary data, 1008 policy, 1009 too large, 1013 try
        /// again later, or a 4000–4999 application code (4401: bad token, like HTTP 401; 4408:
        /// the client was silent too long, like HTTP 408; 4429: too many failed sign-ins, like
        /// HTTP 429).
        let code: UInt16
        /// At most 123 bytes of UTF-8 (RFC 6455 §5.5: control frames carry ≤ 125 bytes).
        let reason: String

        static let unauthorizedCode: UInt16 = 4401
        static let timeoutCode: UInt16 = 4408
        static let tooManyRequests: UInt16 = 4429
        static let policyViolation: UInt16 = 1008
        static let messageTooLarge: UInt16 = 1009
        /// RFC 6455 §7.4.1: a kind of data the endpoint does not take (a binary message).
        static let unsupportedData: UInt16 = 1003
        static let normal: UInt16 = 1000
        static let goingAway: UInt16 = 1001
        static let tryAgainLater: UInt16 = 1013
        /// Never sent (RFC 6455 §7.4.1): marks a connection whose socket failed and is dropped
        /// without a close frame.
        static let abnormal: UInt16 = 1006
    }

    let code: Code
    let message: String
    /// The `type` of the message this answers, when known (lets a client match the refusal).
    var inReplyTo: String?
    var close: Close?
    /// Whole seconds to wait before trying again, when a limit refused (`retryAfter`).
    var retryAfter: Int?
    /// The node that has what was asked for (`*_elsewhere` in cluster mode): the client
    /// reconnects to `/ws?node=` it and asks again.
    var node: String?
    /// That node's own game URL (`gameUrl`), when it has one: the client connects there instead
    /// of `/ws?node=`. Filled in as the refusal is sent (`ConnectionRegistry.refuse`).
    var gameURL: String?
    /// When what was refused becomes possible again (`resetsAt`: the next daily road).
    var resetsAt: Date?

    init(_ code: Code, _ message: String, inReplyTo: String? = nil, close: Close? = nil) {
        self.code = code
        self.message = message
        self.inReplyTo = inReplyTo
        self.close = close
    }

    /// A refusal that names the node holding what was asked for: the connection stays open,
    /// nothing changed, and the client is to ask again on that node.
    init(_ code: Code, _ message: String, inReplyTo: String? = nil, elsewhereOn node: String) {
        self.init(code, message, inReplyTo: inReplyTo)
        self.node = node
    }

    var description: String { "\(code): \(message)" }

    func replying(to type: String?) -> ProtocolError {
        var copy = self
        if copy.inReplyTo == nil { copy.inReplyTo = type }
        return copy
    }
}
