import RetroRapidRules

/// Turns the engine's events into the messages a client gets, as the engine emits them (it is
/// the `GameEventSink` a session steps into, so no event list is built on the hot path).
///
/// The mapping (docs/PROTOCOL.md):
/// - `frame`, then `cue` and `haptic(step)` → one `step` message carrying all three;
/// - `speedUpSoon`, `speedUp`, `bump`, `stepRevised`, `paused`, `resumed` → one message each;
/// - `moved` (+ `haptic(move)`) → `moved`;
/// - `crash`, `haptic(crash)`, `gameOver` → one `crash` message with the final step and score.
///   The `gameOver` message itself comes later, from the session, once the game is saved.
struct GameEventMessages: GameEventSink {
    private(set) var messages: [ServerMessage] = []
    /// The game ended in these events (the engine's `gameOver`).
    private(set) var gameEnded = false
    /// Where the step message of this batch is, so the cue that follows fills it in.
    private var stepIndex: Int?
    private var moveIndex: Int?
    private var pendingCrash: (kind: CrashKind, lane: Lane)?

    init() {
        messages.reserveCapacity(4)
    }

    /// Starts with `buffer`'s storage, emptied: the host hands every step the array of the
    /// step before (`MatchHost.stepBuffer`), so a step allocates none when nothing else still
    /// holds that array.
    init(reusing buffer: consuming [ServerMessage]) {
        buffer.removeAll(keepingCapacity: true)
        if buffer.capacity < 4 { buffer.reserveCapacity(4) }
        messages = buffer
    }

    mutating func receive(_ event: GameEvent) {
        switch event {
        case .frame(let frame):
            stepIndex = messages.count
            messages.append(.step(frame, safeLanes: .none, haptic: false))
        case .cue(let safeLanes):
            guard let index = stepIndex, case .step(let frame, _, let haptic) = messages[index] else { return }
            messages[index] = .step(frame, safeLanes: safeLanes, haptic: haptic)
        case .haptic(let moment):
            applyHaptic(moment)
        case .moved(let lane, let safe):
            moveIndex = messages.count
            messages.append(.moved(lane: lane, safe: safe, haptic: false))
        case .bump(let direction):
            messages.append(.bump(direction))
        case .speedUpSoon(let atScore):
            messages.append(.speedUpSoon(atScore: atScore))
        case .speedUp(let interval, let stage):
            messages.append(.speedUp(interval: interval, stage: stage))
        case .crash(let kind, let lane):
            pendingCrash = (kind, lane)
        case .gameOver(let score, let steps):
            gameEnded = true
            if let crash = pendingCrash {
                messages.append(.crash(kind: crash.kind, lane: crash.lane, step: steps, score: score))
                pendingCrash = nil
            }
        case .stepRevised(let step):
            messages.append(.stepRevised(step: step))
        case .paused:
            messages.append(.paused(reason: .player))
        case .resumed:
            break  // the session sends `resumed` with the time to the next step, which it knows
        }
    }

    /// A step's and a move's haptic moments ride on their messages; crash and bump messages
    /// always carry theirs.
    private mutating func applyHaptic(_ moment: HapticMoment) {
        switch moment {
        case .step:
            guard let index = stepIndex, case .step(let frame, let lanes, _) = messages[index] else { return }
            messages[index] = .step(frame, safeLanes: lanes, haptic: true)
        case .move:
            guard let index = moveIndex, case .moved(let lane, let safe, _) = messages[index] else { return }
            messages[index] = .moved(lane: lane, safe: safe, haptic: true)
        case .crash, .bump:
            break
        }
    }

    /// Leaves out `stepRevised` (for a step the client never saw: its events were held).
    mutating func dropStepRevised() {
        messages.removeAll { if case .stepRevised = $0 { true } else { false } }
    }
}
