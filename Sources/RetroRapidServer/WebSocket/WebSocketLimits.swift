import RetroRapidSupport

/// The game protocol's names and every limit it enforces (docs/PROTOCOL.md: size, rate, connections,
/// idle time), in one place so the welcome message, docs/PROTOCOL.md and the code agree.
///
/// The limits an operator can set are read from the server's `ServerConfiguration`, handed
/// down whole, not copied field by field: its defaults and validation live in
/// `RetroRapidSupport/Configuration.swift` and nowhere else. The rest are the protocol's own.
struct WebSocketLimits: Equatable, Sendable {
    /// The WebSocket subprotocol; a client must offer it (`Sec-WebSocket-Protocol`).
    static let subprotocol = "retrorapid.v1"
    /// The one path that upgrades to the game protocol.
    static let path = "/ws"
    /// The client page where a player without plays can redeem a code or buy unlimited play.
    static let unlockPath = "/unlock.html"

    /// Where the configurable limits come from (`retrorapid help serve`).
    let configuration: ServerConfiguration

    init(configuration: ServerConfiguration = ServerConfiguration()) {
        self.configuration = configuration
    }

    // MARK: - Set by the operator

    /// Largest message accepted, counted across fragments; more closes with 1009.
    var maxMessageBytes: Int { configuration.maxMessageBytes }
    /// Open game connections allowed from one IP address.
    var maxConnectionsPerIP: Int { configuration.maxConnectionsPerIP }
    /// Messages waiting to be written to one client; past this the client cannot keep up and
    /// is dropped (1008), and its game waits as after a dropped connection. About 40 s of
    /// steps at the fastest speed, once the kernel's buffer (`sendBufferBytes`) is full too.
    var maxQueuedMessages: Int { configuration.websocketMaxQueuedMessages }
    /// Time allowed from the handshake to a `hello`; nothing else the client sends extends it.
    var helloTimeoutSeconds: Int { configuration.helloTimeoutSeconds }
    /// A signed-in connection with no game running on it (none, paused or over) that sends no
    /// message for this long is closed (4408). A running game is never timed out: its player
    /// may be listening to the cues without pressing anything, and the keepalive below finds a
    /// dead peer. A paused player keeps theirs by sending `ping` now and then (the client does).
    var idleTimeoutSeconds: Int { configuration.websocketIdleTimeoutSeconds }
    /// How long a game whose connection dropped waits, paused, for the player to come back.
    var disconnectGraceSeconds: Int { configuration.disconnectGraceSeconds }
    /// Watchers of one seat at once (0: watching is off).
    var watchersPerGame: Int { configuration.watchersPerGame }
    /// How often running games' logs are saved (`CheckpointWriter.swift`).
    var checkpointIntervalMilliseconds: Int { configuration.checkpointIntervalMilliseconds }
    /// About how many games one checkpoint slice holds (`CheckpointWriter.swift`).
    var checkpointGamesPerSlice: Int { configuration.checkpointGamesPerSlice }
    /// The grace rule's window as configured; the engine caps it at half a step.
    var latencyGraceMilliseconds: Int { configuration.latencyGraceMilliseconds }
    /// A PING goes out when nothing (no message, no PONG) came for this long…
    var keepalivePingSeconds: Int { configuration.keepalivePingSeconds }
    /// …and hangs up, without a close frame, when none came for this long.
    var keepaliveHangupSeconds: Int { configuration.keepaliveHangupSeconds }

    // MARK: - The protocol's own

    /// Messages a connection may send each second, sustained…
    var inputsPerSecond: Int { 20 }
    /// …and in a burst (a player tapping fast, a reconnect's catch-up).
    var inputBurst: Int { 40 }
    /// Refused messages in a row (over the rate) after which the client is taken to be
    /// flooding and the connection is closed (1008).
    var floodLimit: Int { 60 }
    /// The kernel's send buffer of a game socket (SO_SNDBUF; Linux doubles it for its own
    /// bookkeeping). Left alone, Linux grows it to megabytes, so a client that stops reading
    /// would take minutes to fill it and reach `maxQueuedMessages`, pinning that memory
    /// meanwhile. 16 KiB is ~100 steps, and far more than a reading client ever has in flight.
    var sendBufferBytes: Int { 16 * 1024 }
}
