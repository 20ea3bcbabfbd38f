/// What a game's outcome depends on besides its seed and level: how many steps were
/// taken and each move, tagged with the number of steps taken before it. Pauses are
/// not in it because they change nothing. Stored with every game so it can be
/// re-simulated (`Replay`), verified and watched again.
public struct InputLog: Hashable, Sendable {
    public struct Entry: Hashable, Sendable {
        /// Steps taken before this move was applied.
        public var afterStep: Int
        public var direction: Direction

        public init(afterStep: Int, direction: Direction) {
            self.afterStep = afterStep
            self.direction = direction
        }
    }

    public private(set) var moves: [Entry] = []
    public private(set) var steps = 0

    public init() {}

    /// A log from stored parts; `Replay` checks it makes sense.
    public init(steps: Int, moves: [Entry]) {
        self.steps = steps
        self.moves = moves
    }

    mutating func recordStep() { steps += 1 }

    /// The grace rule found the last step never happened (see `Game.move`).
    mutating func revokeLastStep() { steps -= 1 }

    mutating func recordMove(_ direction: Direction, afterStep: Int) {
        moves.append(Entry(afterStep: afterStep, direction: direction))
    }

    /// Compact text for storage: the step count, a colon, then each move as its step
    /// and L or R, comma-separated. "57:3L,3L,10R" is 57 steps with two left moves
    /// after step 3 and a right move after step 10.
    public var encoded: String {
        "\(steps):" + moves.map { "\($0.afterStep)\($0.direction == .left ? "L" : "R")" }.joined(separator: ",")
    }

    public enum DecodingError: Error, Equatable, CustomStringConvertible {
        case malformed(String)
        case outOfOrder(entry: Int)
        case beyondLastStep(entry: Int)

        public var description: String {
            switch self {
            case .malformed(let reason): "input log is malformed: \(reason)"
            case .outOfOrder(let entry): "input log move \(entry) comes before the step of the move ahead of it"
            case .beyondLastStep(let entry): "input log move \(entry) comes after the game's last step"
            }
        }
    }

    /// Reads `encoded` back, refusing anything that could not have been written.
    public init(encoded text: String) throws(DecodingError) {
        guard let colon = text.firstIndex(of: ":") else { throw .malformed("no ':' after the step count") }
        guard let steps = Self.wholeNumber(text[..<colon]) else {
            throw .malformed("the step count is not a whole number")
        }
        var moves: [Entry] = []
        let body = text[text.index(after: colon)...]
        if !body.isEmpty {
            for (index, token) in body.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                guard let last = token.last, last == "L" || last == "R",
                      let afterStep = Self.wholeNumber(token.dropLast())
                else { throw .malformed("move \(index) is '\(token)', expected a step number then L or R") }
                if let previous = moves.last, previous.afterStep > afterStep { throw .outOfOrder(entry: index) }
                if afterStep > steps { throw .beyondLastStep(entry: index) }
                moves.append(Entry(afterStep: afterStep, direction: last == "L" ? .left : .right))
            }
        }
        self.init(steps: steps, moves: moves)
    }

    /// A number as `encoded` writes one: ASCII digits, no sign, no leading zero. `Int(_:)`
    /// alone also takes "+5" and "007", which would give one log two stored forms (found by
    /// the input-log fuzz target, Sources/RetroRapidFuzz/InputLogFuzzTarget.swift).
    private static func wholeNumber(_ text: Substring) -> Int? {
        guard let first = text.utf8.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first),
              first != UInt8(ascii: "0") || text.utf8.count == 1 else { return nil }
        return Int(text)  // nil when it does not fit
    }
}
