#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import RetroRapidDomain
import Synchronization

/// The cluster bus over PostgreSQL's LISTEN/NOTIFY: every node LISTENs on one channel of the
/// shared database and publishes with `SELECT pg_notify(channel, payload)`, the payload being
/// the message signed with the cluster secret and stamped (`ClusterSigner`). PostgreSQL hands a
/// notification to every session listening on the channel when the sending transaction
/// commits, the sender's own included: the bus drops those by their sender, so a node never
/// receives its own messages.
///
/// Any role that can connect to the database can NOTIFY on the channel too (PostgreSQL has no
/// privilege for it), so a notification reaches `receive` only when its signature is right,
/// its time within `ClusterSigner.window` of this node's clock and it is not a copy of one
/// already taken (`ClusterReplayGuard`); anything else is counted by reason
/// (`rejectedCount(_:)`) and reported through `onEvent`, at most one report a second.
/// One bus sends on one connection, one statement after another, so the other nodes receive
/// its messages in the order it published them.
///
/// Delivery is at most once. A connection that is lost (the server restarts, an operator
/// terminates it) is made again with a growing pause between attempts, logged through
/// `onEvent`; what was published or sent meanwhile is lost, which is fine because the bus is a
/// hint: the state is in the database, and a node that missed a message only missed a live
/// update (docs/OPERATIONS.md, "Scale out").
///
/// Threading rule: the bus has a thread of its own (`rr-bus`) that alone uses its
/// `PostgresConnection`. It waits in poll(2) on the connection's socket and on a wake-up pipe;
/// `publish` (any thread) appends to a queue under a mutex and writes one byte to the pipe,
/// so it never waits on the network; `stop` (any thread but the bus's) sets a flag, wakes the
/// thread the same way and joins it. `receive` and `onEvent` are called on the bus thread and
/// must return at once (the server posts to its service thread's mailbox).
public final class PostgresClusterBus: ClusterBus {
    /// The channel every node of one database listens on.
    public static let defaultChannel = "retrorapid_cluster"

    /// What happened to the bus's connection, for the log.
    public enum Event: Sendable, Equatable {
        /// The connection was lost; `droppedMessages` published messages were not sent.
        case connectionLost(reason: String, droppedMessages: Int)
        /// A new connection could not be made; the next attempt is in `retryInSeconds`.
        case reconnectFailed(reason: String, retryInSeconds: Double)
        /// Listening again after `attempts` attempts.
        case reconnected(attempts: Int)
        /// A signed notification on the channel that is not a message this build knows (its
        /// first 64 characters): ignored.
        case ignoredPayload(String)
        /// A notification dropped for `reason` (its first 64 characters); `suppressed` more
        /// were dropped since the last report and not reported one by one (counted all the same).
        case rejected(reason: ClusterBusRejection, payload: String, suppressed: Int)
        /// One message could not be sent on a connection that is still up (the server refused
        /// the statement); it is dropped.
        case sendFailed(reason: String)
    }

    /// Pauses between attempts to connect again: `initial` after the first failed attempt
    /// (the first is made at once), doubling up to `maximum`.
    public struct Backoff: Sendable, Equatable {
        public var initial: Double
        public var maximum: Double

        public init(initial: Double = 0.1, maximum: Double = 5) {
            self.initial = initial
            self.maximum = maximum
        }
    }

    public let nodeID: String
    public let channel: String
    private let settings: BusSettings
    private let state = BusState()
    private let thread = Mutex<ThreadHandle?>(nil)

    private struct ThreadHandle: @unchecked Sendable {
        let thread: pthread_t
    }

    /// A bus for node `nodeID` on the database `conninfo` names (a `postgres://` URL or
    /// `key=value` pairs), signing with `secrets`. Nothing connects before `start`.
    ///
    /// - Parameters:
    ///   - channel: a lower-case SQL identifier (letters, digits, `_`), the same on every node
    ///     of the cluster.
    ///   - maximumQueued: messages waiting beyond this are dropped (a database too slow to take
    ///     them is no reason to grow without bound: they are hints).
    ///   - onEvent: called on the bus thread with what happened to the connection (to log it).
    public init(conninfo: String, nodeID: String, secrets: ClusterSecrets, channel: String = PostgresClusterBus.defaultChannel,
                backoff: Backoff = Backoff(), maximumQueued: Int = 10_000,
                onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws {
        guard !nodeID.isEmpty, nodeID.utf8.count <= 64,
              nodeID.unicodeScalars.allSatisfy({ $0.isASCII && $0.value > 32 && $0.value < 127 && $0 != "|" }) else {
            throw PostgresError.misuse("a cluster node id is 1 to 64 printable ASCII characters without '|' or spaces; got '\(nodeID.prefix(80))'")
        }
        let lower = UInt8(ascii: "a")...UInt8(ascii: "z"), digits = UInt8(ascii: "0")...UInt8(ascii: "9")
        guard let first = channel.utf8.first, !digits.contains(first), channel.utf8.count <= 63,
              channel.utf8.allSatisfy({ lower.contains($0) || digits.contains($0) || $0 == UInt8(ascii: "_") }) else {
            throw PostgresError.misuse("a cluster channel is a lower-case identifier (a-z, 0-9, _; not starting with a digit); got '\(channel.prefix(80))'")
        }
        self.nodeID = nodeID
        self.channel = channel
        settings = BusSettings(conninfo: Self.withKeepalives(conninfo), nodeID: nodeID, channel: channel,
                               signer: ClusterSigner(secrets: secrets, channel: channel), backoff: backoff,
                               maximumQueued: maximumQueued, onEvent: onEvent)
    }

    deinit {
        stop()
    }

    /// TCP keepalives a minute or so apart, unless `conninfo` sets its own: the bus only
    /// listens, so without them a database that vanished from the network (no FIN, no RST)
    /// would leave it "connected" for the operating system's two hours.
    static let keepalives = [("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"),
                             ("keepalives_count", "3")]

    /// `conninfo` with ``keepalives`` added where it names none of its own: as URL query
    /// parameters for a `postgres://` URL, as `key=value` pairs otherwise.
    static func withKeepalives(_ conninfo: String) -> String {
        let missing = keepalives.filter { key, _ in !conninfo.contains(key + "=") }
        guard !missing.isEmpty else { return conninfo }
        if conninfo.hasPrefix("postgres://") || conninfo.hasPrefix("postgresql://") {
            let query = missing.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
            return conninfo + (conninfo.contains("?") ? "&" : "?") + query
        }
        return conninfo + " " + missing.map { "\($0.0)=\($0.1)" }.joined(separator: " ")
    }

    public var isConnected: Bool { state.isConnected }

    public var reconnectCount: Int { state.reconnectCount }

    public func rejectedCount(_ reason: ClusterBusRejection) -> Int { state.rejectedCount(reason) }

    public var previousSecretCount: Int { state.previousSecretCount }

    /// Connects and LISTENs (throwing what went wrong, e.g. an unreachable server), then starts
    /// the bus thread, which calls `receive` with every other node's message from then on.
    /// Once only.
    public func start(_ receive: @escaping @Sendable (ClusterEnvelope) -> Void) throws {
        try state.beginStart()
        let connection: PostgresConnection
        do {
            connection = try PostgresConnection(conninfo: settings.conninfo)
            try connection.executeScript("LISTEN \(channel)")
            try state.openWakePipe()
        } catch {
            state.closeWakePipe()
            throw error
        }
        state.markConnected()
        let body = BusThread(settings: settings, state: state, connection: connection, receive: receive)
        let retained = Unmanaged.passRetained(body).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(&thread, nil, { argument in
            Unmanaged<BusThread>.fromOpaque(argument!).takeRetainedValue().run()
            return nil
        }, retained)
        guard created == 0 else {
            Unmanaged<BusThread>.fromOpaque(retained).release()
            state.closeWakePipe()
            throw PostgresError.misuse("cannot start the bus thread: error \(created)")
        }
        self.thread.withLock { $0 = ThreadHandle(thread: thread) }
    }

    /// Queues `message` for the bus thread and returns. Dropped (it is only a hint) when the
    /// bus is not connected, has stopped, or already holds `maximumQueued` unsent messages.
    public func publish(_ message: ClusterMessage) {
        state.enqueue(message, limit: settings.maximumQueued)
    }

    /// Sends what was already published, stops the thread and closes the connection; nothing
    /// is received after it returns. Safe to call more than once, and before `start`.
    public func stop() {
        state.beginStop()
        if let handle = thread.withLock({ state -> ThreadHandle? in defer { state = nil }; return state }) {
            precondition(pthread_equal(handle.thread, pthread_self()) == 0, "PostgresClusterBus.stop() called from the bus thread")
            pthread_join(handle.thread, nil)
        }
        state.closeWakePipe()
    }
}

/// What the bus thread needs to know, fixed at `init`.
private struct BusSettings: Sendable {
    let conninfo: String
    let nodeID: String
    let channel: String
    let signer: ClusterSigner
    let backoff: PostgresClusterBus.Backoff
    let maximumQueued: Int
    let onEvent: @Sendable (PostgresClusterBus.Event) -> Void
}

/// What the bus's callers and its thread share, under one mutex: the messages to send, the
/// stop flag, the connection's state and the wake-up pipe.
private final class BusState: Sendable {
    private struct Shared {
        var outbox: [ClusterMessage] = []
        var started = false
        var stopping = false
        var connected = false
        var reconnects = 0
        /// Notifications dropped, by `ClusterBusRejection.allCases` index.
        var rejected = [Int](repeating: 0, count: ClusterBusRejection.allCases.count)
        /// Messages taken that were signed with the previous secret.
        var previousSecret = 0
        /// The wake-up pipe's ends; -1 before `start` and after `stop`.
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        /// A byte is in the pipe and not yet read (saves a write per publish in a burst).
        var wakePending = false
    }

    private let shared = Mutex(Shared())

    var isConnected: Bool { shared.withLock { $0.connected } }
    var reconnectCount: Int { shared.withLock { $0.reconnects } }
    var previousSecretCount: Int { shared.withLock { $0.previousSecret } }

    func rejectedCount(_ reason: ClusterBusRejection) -> Int {
        let index = ClusterBusRejection.allCases.firstIndex(of: reason)!
        return shared.withLock { $0.rejected[index] }
    }

    func countRejected(_ reason: ClusterBusRejection) {
        let index = ClusterBusRejection.allCases.firstIndex(of: reason)!
        shared.withLock { $0.rejected[index] += 1 }
    }

    func countPreviousSecret() {
        shared.withLock { $0.previousSecret += 1 }
    }

    var isStopping: Bool { shared.withLock { $0.stopping } }
    var wakeDescriptor: Int32 { shared.withLock { $0.wakeRead } }

    func beginStart() throws {
        let refused = shared.withLock { state in
            defer { state.started = true }
            return state.started || state.stopping
        }
        if refused { throw PostgresError.misuse("a cluster bus starts once, and not after stop()") }
    }

    func openWakePipe() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw PostgresError.misuse("cannot make the bus's wake-up pipe: errno \(errno)") }
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        shared.withLock { state in
            state.wakeRead = ends[0]
            state.wakeWrite = ends[1]
        }
    }

    func closeWakePipe() {
        shared.withLock { state in
            if state.wakeRead >= 0 { close(state.wakeRead) }
            if state.wakeWrite >= 0 { close(state.wakeWrite) }
            state.wakeRead = -1
            state.wakeWrite = -1
        }
    }

    func enqueue(_ message: ClusterMessage, limit: Int) {
        shared.withLock { state in
            guard state.connected, !state.stopping, state.outbox.count < limit else { return }
            state.outbox.append(message)
            Self.wake(&state)
        }
    }

    func beginStop() {
        shared.withLock { state in
            state.stopping = true
            state.connected = false
            Self.wake(&state)
        }
    }

    /// Empties the wake-up pipe and takes what is to be sent, and whether the bus is stopping
    /// (what was published before `stop` is still sent).
    func takeWork() -> (messages: [ClusterMessage], stopping: Bool) {
        shared.withLock { state in
            if state.wakeRead >= 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                while read(state.wakeRead, &buffer, buffer.count) > 0 {}
            }
            state.wakePending = false
            defer { state.outbox.removeAll(keepingCapacity: true) }
            return (state.outbox, state.stopping)
        }
    }

    func markConnected() {
        shared.withLock { $0.connected = true }
    }

    /// Marks the bus down and returns how many queued messages that drops.
    func markLost() -> Int {
        shared.withLock { state in
            state.connected = false
            defer { state.outbox.removeAll() }
            return state.outbox.count
        }
    }

    func markReconnected() {
        shared.withLock { state in
            guard !state.stopping else { return }
            state.connected = true
            state.reconnects += 1
        }
    }

    private static func wake(_ state: inout Shared) {
        guard !state.wakePending, state.wakeWrite >= 0 else { return }
        state.wakePending = true
        var byte: UInt8 = 1
        _ = write(state.wakeWrite, &byte, 1)
    }
}

/// The bus thread's own state: the connection, the receiver, this process's stamp and what it
/// has taken, touched by no other thread. It holds the shared state, not the bus, so a bus
/// nobody references any more stops (deinit).
private final class BusThread {
    let settings: BusSettings
    let state: BusState
    var connection: PostgresConnection?
    /// The server process that LISTENs for us; another one means libpq reconnected on its own
    /// (`PostgresConnection.execute` does after a loss) and the LISTEN must be made again.
    var listeningPID: Int32
    let receive: @Sendable (ClusterEnvelope) -> Void
    static let sendSQL = "SELECT pg_notify($1, $2)"
    /// This process's messages: random per start, so a restarted node's sequence starts over
    /// without looking like a replay of the last run's.
    let boot = UInt64.random(in: 1...UInt64.max)
    var sequence: UInt64 = 0
    var replayGuard = ClusterReplayGuard()
    /// At most one rejection is reported a second; the others are counted in the next report.
    var lastRejectionReport: ContinuousClock.Instant?
    var unreportedRejections = 0

    init(settings: BusSettings, state: BusState, connection: PostgresConnection,
         receive: @escaping @Sendable (ClusterEnvelope) -> Void) {
        self.settings = settings
        self.state = state
        self.connection = connection
        listeningPID = connection.backendPID
        self.receive = receive
    }

    func run() {
        nameCurrentThreadForBus()
        var attempts = 0
        var pause = settings.backoff.initial
        // Connected, the loop ends only where it has taken the last work (what was published
        // before `stop` is sent): a stop flag checked up here could skip it.
        while true {
            guard let connection else {
                // Disconnected: the first attempt at once, then after growing pauses; a stop
                // ends a pause at once.
                if state.isStopping { break }
                if attempts > 0 {
                    waitForWake(timeoutSeconds: pause)
                    if state.isStopping { break }
                    pause = min(pause * 2, settings.backoff.maximum)
                }
                attempts += 1
                do {
                    let fresh = try PostgresConnection(conninfo: settings.conninfo)
                    try fresh.executeScript("LISTEN \(settings.channel)")
                    self.connection = fresh
                    listeningPID = fresh.backendPID
                    state.markReconnected()
                    settings.onEvent(.reconnected(attempts: attempts))
                    attempts = 0
                    pause = settings.backoff.initial
                } catch {
                    settings.onEvent(.reconnectFailed(reason: Self.reason(error), retryInSeconds: pause))
                }
                continue
            }
            do {
                let socket = connection.socketDescriptor
                guard socket >= 0 else { throw PostgresError(sqlState: "", message: "the connection is closed") }
                waitForSocketOrWake(socket)
                let work = state.takeWork()
                for message in work.messages {
                    try send(message, on: connection)
                }
                if work.stopping { break }
                // After the sends too: notifications that came in during a statement wait in
                // libpq, not in the socket, and would not wake the poll.
                for notification in try connection.takeNotifications() {
                    deliver(notification)
                }
                if connection.socketDescriptor < 0 {
                    throw PostgresError(sqlState: "", message: "the server closed the connection")
                }
                if connection.backendPID != listeningPID {
                    // libpq reconnected inside a statement: the new session does not listen yet.
                    try connection.executeScript("LISTEN \(settings.channel)")
                    listeningPID = connection.backendPID
                    state.markReconnected()
                    settings.onEvent(.reconnected(attempts: 1))
                }
            } catch {
                lose(error)
            }
        }
        self.connection = nil
    }

    private func send(_ message: ClusterMessage, on connection: PostgresConnection) throws {
        sequence += 1
        let stamp = ClusterStamp(boot: boot, sequence: sequence, sentAt: Self.now())
        let payload = settings.signer.seal(ClusterEnvelope(sender: settings.nodeID, message: message), stamp: stamp)
        do {
            try connection.execute(Self.sendSQL, [settings.channel, payload])
        } catch {
            // A connection still up refused this one statement: drop the message, keep going.
            guard connection.socketDescriptor < 0 || (error as? PostgresError)?.isConnectionFailure == true else {
                settings.onEvent(.sendFailed(reason: Self.reason(error)))
                return
            }
            throw error
        }
    }

    private func deliver(_ notification: PostgresNotification) {
        guard notification.channel == settings.channel else { return }
        let now = Self.now()
        let opened: ClusterSigner.Opened
        switch settings.signer.open(notification.payload, now: now) {
        case .success(let signed): opened = signed
        case .failure(let reason): return reject(notification.payload, reason)
        }
        // PostgreSQL tells the sender too.
        guard opened.sender != settings.nodeID else { return }
        guard replayGuard.admit(sender: opened.sender, stamp: opened.stamp, now: now) else {
            return reject(notification.payload, .replayed)
        }
        guard let envelope = opened.envelope else {
            settings.onEvent(.ignoredPayload(String(notification.payload.prefix(64))))
            return
        }
        if opened.signedWithPrevious { state.countPreviousSecret() }
        receive(envelope)
    }

    /// Counts every rejection; reports one a second at most, so a flood cannot flood the log.
    private func reject(_ payload: String, _ reason: ClusterBusRejection) {
        state.countRejected(reason)
        let now = ContinuousClock.now
        if let last = lastRejectionReport, now - last < .seconds(1) {
            unreportedRejections += 1
            return
        }
        lastRejectionReport = now
        settings.onEvent(.rejected(reason: reason, payload: String(payload.prefix(64)), suppressed: unreportedRejections))
        unreportedRejections = 0
    }

    /// This node's clock in milliseconds since 1970, for stamps and the replay window.
    private static func now() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    private func lose(_ error: any Error) {
        connection = nil
        let dropped = state.markLost()
        settings.onEvent(.connectionLost(reason: Self.reason(error), droppedMessages: dropped))
    }

    /// poll(2) on the connection's socket (readable: notifications, or the server closing it)
    /// and the wake-up pipe (a publish or a stop), without a timeout: nothing else is due.
    private func waitForSocketOrWake(_ socket: Int32) {
        var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: state.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, nfds_t(descriptors.count), -1) < 0 && errno == EINTR {}
    }

    /// poll(2) on the wake-up pipe alone for at most `timeoutSeconds` (the pause before
    /// connecting again), ended early by a stop.
    private func waitForWake(timeoutSeconds: Double) {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeoutSeconds * 1000))
        while !state.isStopping {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return }
            var descriptor = pollfd(fd: state.wakeDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(Double(Int32.max), (left / .milliseconds(1)).rounded(.up)))
            // A publish while disconnected wakes us too; it was dropped, so keep waiting.
            if poll(&descriptor, 1, milliseconds) > 0 { _ = state.takeWork() }
        }
    }

    private static func reason(_ error: any Error) -> String {
        ((error as? PostgresError)?.message ?? String(describing: error)).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// `rr-bus` in `top -H` and `ps -L` (the same way RetroRapidSupport's `nameCurrentThread`
/// does; this target does not import it).
private func nameCurrentThreadForBus() {
    #if os(Linux)
    let fd = open("/proc/thread-self/comm", O_WRONLY)
    guard fd >= 0 else { return }
    let name = Array("rr-bus".utf8)
    _ = name.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    #endif
}
