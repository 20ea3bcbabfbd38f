import RetroRapidSupport

/// The game protocol's names and every limit it enforces (docs/PROTOCOL.md: size, rate, connections,
/// idle time), in one place so the welcome message, docs/PROTOCOL.md and the code agree.
struct WebSocketLimits: Equatable, Sendable {
    /// The WebSocket subprotocol; a client must offer it (`Sec-WebSocket-Protocol`).
    static let subprotocol = "retrorapid.v1"
    /// The one path that upgrades to the game protocol.
    static let path = "/ws"
    /// The client page where a player without plays can redeem a code or buy unlimited play.
    static let unlockPath = "/unlock.html"

    /// Largest message accepted, counted across fragments; more closes with 1009.
    var maxMessageBytes = 4096
    /// Open game connections allowed from one IP address.
    var maxConnectionsPerIP = 64
    /// Messages a connection may send each second, sustained…
    var inputsPerSecond = 20
    /// …and in a burst (a player tapping fast, a reconnect's catch-up).
    var inputBurst = 40
    /// Refused messages in a row (over the rate) after which the client is taken to be
    /// flooding and the connection is closed (1008).
    var floodLimit = 60
    /// Messages waiting to be written to one client; past this the client cannot keep up and
    /// is dropped (1008), and its game waits as after a dropped connection. About 40 s of
    /// steps at the fastest speed, once the kernel's buffer (`sendBufferBytes`) is full too.
    var maxQueuedMessages = 100
    /// The kernel's send buffer of a game socket (SO_SNDBUF; Linux doubles it for its own
    /// bookkeeping). Left alone, Linux grows it to megabytes, so a client that stops reading
    /// would take minutes to fill it and reach `maxQueuedMessages`, pinning that memory
    /// meanwhile. 16 KiB is ~100 steps, and far more than a reading client ever has in flight.
    var sendBufferBytes = 16 * 1024
    /// Time allowed from the handshake to a `hello`; nothing else the client sends extends it.
    var helloTimeoutSeconds = 10
    /// A signed-in connection with no game running on it (none, paused or over) that sends no
    /// message for this long is closed (4408). A running game is never timed out: its player
    /// may be listening to the cues without pressing anything, and the keepalive below finds a
    /// dead peer. A paused player keeps theirs by sending `ping` now and then (the client does).
    var idleTimeoutSeconds = 900
    /// How long a game whose connection dropped waits, paused, for the player to come back.
    var disconnectGraceSeconds = 60
    /// How often running games' logs are saved (`WebSocketHubCheckpoints.swift`).
    var checkpointIntervalMilliseconds = 1000
    /// The grace rule's window as configured; the engine caps it at half a step.
    var latencyGraceMilliseconds = 150
    /// A PING goes out when nothing (no message, no PONG) came for this long…
    var keepalivePingSeconds = 20
    /// …and hangs up, without a close frame, when none came for this long.
    var keepaliveHangupSeconds = 45

    init() {}

    init(configuration: ServerConfiguration) {
        maxMessageBytes = configuration.maxMessageBytes
        maxConnectionsPerIP = configuration.maxConnectionsPerIP
        maxQueuedMessages = configuration.websocketMaxQueuedMessages
        helloTimeoutSeconds = configuration.helloTimeoutSeconds
        idleTimeoutSeconds = configuration.websocketIdleTimeoutSeconds
        disconnectGraceSeconds = configuration.disconnectGraceSeconds
        checkpointIntervalMilliseconds = configuration.checkpointIntervalMilliseconds
        latencyGraceMilliseconds = configuration.latencyGraceMilliseconds
        keepalivePingSeconds = configuration.keepalivePingSeconds
        keepaliveHangupSeconds = configuration.keepaliveHangupSeconds
    }
}
