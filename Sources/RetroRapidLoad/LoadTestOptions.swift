/// What one load test does: whom it connects to, how many players, how they play, for how long.
public struct LoadTestOptions: Sendable, Equatable {
    /// A loopback address (127.0.0.0/8 or ::1): the load generator refuses any other target.
    public var host = "127.0.0.1"
    public var port = 8080
    /// Concurrent player connections to open and hold.
    public var connections = 100
    /// Device tokens to sign in with, one per connection (from `retrorapid seed-players`).
    public var tokens: [String] = []
    /// `cruise`, `fast` or `rapid`.
    public var level = "fast"
    /// Connected players only: sign in and stay, never start a game (memory per idle player).
    public var idle = false
    /// New connections per second during the ramp.
    public var rampPerSecond = 1000
    /// Seconds between the last connection and the start of the measured window.
    public var settleSeconds = 5
    /// Length of the measured window, seconds.
    public var holdSeconds = 20
    /// Local addresses to connect from, round robin (127.0.0.x), so that no address needs more
    /// than ~10,000 ephemeral ports (docs/LIBWEBSOCKETS-4.1.6.md). Empty: let the kernel choose.
    public var sourceAddresses: [String] = []
    /// The server's pid, to sample its CPU and memory (Linux /proc); nil skips that.
    public var serverPID: Int32? = nil
    /// A fixed, bounded workload (scripts/bench-cost.sh counts its cost): every player plays
    /// one game, quits it after this many steps (0: as soon as it starts) and starts no other;
    /// the run ends when every game has ended and the whole run is measured (no settle, no
    /// window). `holdSeconds` is then the most the games may take after the ramp. nil: play
    /// on, game after game, through the settle and the window.
    public var steps: Int? = nil
    public var behaviour = LoadBot.Behaviour()
    public var seed: UInt64 = 1

    /// Limits that keep a mistake from turning into a flood: sockets fit under this machine's
    /// hard open-file limit (20,000, one process) and a run ends within the hour.
    public static let maximumConnections = 19_900
    public static let maximumSeconds = 3600

    public init() {}

    /// Refuses options that would aim anywhere but loopback or run without bounds.
    public func validate() throws(LoadTestError) {
        guard Self.isLoopback(host) else {
            throw LoadTestError("--host must be a loopback address (127.x.x.x or ::1), not '\(host)': the load generator only targets this machine")
        }
        for address in sourceAddresses where !Self.isLoopback(address) {
            throw LoadTestError("--source-addresses must be loopback addresses, not '\(address)'")
        }
        guard (1...Self.maximumConnections).contains(connections) else {
            throw LoadTestError("--connections must be between 1 and \(Self.maximumConnections) (one process may hold ~19,990 sockets here)")
        }
        guard tokens.count >= connections else {
            throw LoadTestError("\(connections) connections need \(connections) device tokens; the tokens file has \(tokens.count) (make more with retrorapid seed-players)")
        }
        guard ["cruise", "fast", "rapid"].contains(level) else {
            throw LoadTestError("--level must be cruise, fast or rapid, not '\(level)'")
        }
        guard (1...100_000).contains(rampPerSecond) else { throw LoadTestError("--ramp-per-second must be between 1 and 100000") }
        guard (0...Self.maximumSeconds).contains(settleSeconds), (1...Self.maximumSeconds).contains(holdSeconds) else {
            throw LoadTestError("--settle-seconds (0…3600) and --hold-seconds (1…3600) bound the run")
        }
        if let steps {
            guard (0...100_000).contains(steps) else { throw LoadTestError("--steps must be between 0 and 100000") }
            guard !idle else { throw LoadTestError("--steps plays one game per player; --idle plays none: choose one") }
        }
        guard (1...65535).contains(port) else { throw LoadTestError("--port must be between 1 and 65535") }
    }

    static func isLoopback(_ address: String) -> Bool {
        if address == "::1" || address == "localhost" { return true }
        let parts = address.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in Int(part).map { (0...255).contains($0) } ?? false }
    }
}

/// A load test that cannot run as asked; the message says why.
public struct LoadTestError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ message: String) { description = message }
}
