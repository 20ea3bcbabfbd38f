/// What the load generator counts and times during the measured window.
///
/// Latency and jitter samples are kept whole (microseconds, 4 bytes each) and sorted once at
/// the end, so the percentiles are exact rather than a histogram's estimate: 20,000 games at
/// one move a second for a minute is 1.2 M samples, under 5 MB.
public struct LoadStatistics: Sendable {
    /// Move sent → its `moved` (or `bump`) received, microseconds.
    public var inputLatencies: [UInt32] = []
    /// |time between consecutive steps − the interval the earlier step announced|, microseconds.
    public var stepJitters: [UInt32] = []
    public var stepFrames = 0
    public var stepFrameBytes = 0
    public var messagesReceived = 0
    public var bytesReceived = 0
    public var messagesSent = 0
    public var movesSent = 0
    public var gamesStarted = 0
    public var gamesEnded = 0
    public var crashes = 0
    /// `error` messages from the server, by code.
    public var serverErrors: [String: Int] = [:]
    /// Connections that closed while the load generator still wanted them, by close code.
    public var disconnects: [Int: Int] = [:]
    public var connectFailures = 0

    // Race tests (counted at the racers; a race once, at its host).
    /// `standings` messages the racers received, and their bytes.
    public var standingsReceived = 0
    public var standingsBytes = 0
    /// Races whose `countdown` / `raceOver` reached their host.
    public var racesStarted = 0
    public var racesEnded = 0
    /// `roomLeft` messages: a racer's room closed or it was put out.
    public var roomsLeft = 0

    // Watchers: what they received. Not in the players' counts above.
    public var watcherMessages = 0
    public var watcherBytes = 0
    public var watcherStepFrames = 0
    public var watcherStandings = 0
    public var watchesStarted = 0
    public var watchesEnded = 0
    /// A watcher's step arrival minus the arrival of the same step at the racer (or solo
    /// player) it watches, microseconds, both on the load generator's clock; 0 when the
    /// watcher had it first (those are also counted in `watcherFramesFirst`).
    public var watcherLags: [UInt32] = []
    public var watcherFramesFirst = 0
    /// Jitter of the steps a watcher receives, measured as for players.
    public var watcherJitters: [UInt32] = []

    /// Counts over the whole run (ramp and settle too, where rooms open and fill), which the
    /// start of the measured window does not reset.
    public struct WholeRun: Sendable {
        public var roomsOpened = 0
        public var racesStarted = 0
        public var racesEnded = 0
        public var watchesStarted = 0
        /// Connections moved to the game URL their `welcome` named (`--follow-game-url`),
        /// mostly during the ramp.
        public var movedStraight = 0
        /// `--reconnect`: connections that dropped while their game ran, and for each game
        /// taken back (its `snapshot`), when its connection dropped and when it came back
        /// (monotonic µs) and the steps of play it lost (the step seen last minus the step it
        /// resumed at, times that step's interval, µs).
        public var droppedWhilePlaying = 0
        /// Solo games whose `gameOver` said `saved: true`: acknowledged, so stored.
        public var gamesSaved = 0
        public var takenBack: [(droppedAt: Int64, resumedAt: Int64, lostMicroseconds: Int64)] = []
        public var serverErrors: [String: Int] = [:]
        public init() {}
    }
    public var wholeRun = WholeRun()

    public init() {}

    public var errorCount: Int { serverErrors.values.reduce(0, +) }
    public var disconnectCount: Int { disconnects.values.reduce(0, +) }
}

/// Exact order statistics of a sample.
public struct Percentiles: Sendable, Equatable {
    public let count: Int
    public let p50: Double
    public let p95: Double
    public let p99: Double
    public let max: Double

    /// `samples` in microseconds; the figures come out in milliseconds. Nearest-rank method:
    /// p99 is the smallest sample with at least 99 % of the samples at or below it.
    public init(microseconds samples: [UInt32]) {
        let sorted = samples.sorted()
        count = sorted.count
        func rank(_ fraction: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            let index = Swift.max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1)
            return Double(sorted[Swift.min(index, sorted.count - 1)]) / 1000
        }
        p50 = rank(0.50)
        p95 = rank(0.95)
        p99 = rank(0.99)
        max = sorted.last.map { Double($0) / 1000 } ?? 0
    }
}
