import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import RetroRapidLoad
import RetroRapidSupport

/// The load generator's pure parts: reading server messages, the bot, the statistics, limits.
@Suite("Load generator pieces")
struct LoadPiecesTests {
    private func scan<T>(_ text: String, _ body: (MessageScanner) -> T) -> T {
        Array(text.utf8).withUnsafeBytes { body(MessageScanner($0)) }
    }

    @Test func followsOnlyAPlainGameURLOnThisMachine() {
        #expect(LoadGenerator.loopbackGameURL("ws://127.0.0.4:8081/ws")! == ("127.0.0.4", 8081, "/ws"))
        #expect(LoadGenerator.loopbackGameURL("ws://127.0.0.1:9000")! == ("127.0.0.1", 9000, "/"))
        for refused in ["wss://127.0.0.1:8081/ws", "ws://10.0.0.12:8081/ws", "ws://127.0.0.1/ws", "ws://127.0.0.1:0/ws",
                        "ws://127.0.0.1:70000/ws", "ws://a.play.example.com:443/ws", "http://127.0.0.1:8080/ws", ""] {
            #expect(LoadGenerator.loopbackGameURL(refused) == nil, "\(refused)")
        }
    }

    @Test func readsAStepMessageAsTheServerWritesIt() {
        let step = #"{"type":"step","step":16,"grid":[[0,0,1],[0,0,0],[0,0,0],[0,1,0],[0,0,0],[1,0,1],[0,0,0]],"lane":2,"score":13,"interval":540,"safeLanes":[0,2],"haptic":"step"}"#
        scan(step) { message in
            #expect(message.kind == .step)
            #expect(message.integer("step") == 16)
            #expect(message.integer("lane") == 2)
            #expect(message.integer("interval") == 540)
            #expect(message.laneSet("safeLanes") == 0b101)
            #expect(message.integer("missing") == nil)
        }
    }

    @Test func aNumberNoIntHoldsIsNoAnswerNotATrap() {
        scan(#"{"type":"step","step":9223372036854775807}"#) { #expect($0.integer("step") == Int.max) }
        scan(#"{"type":"step","step":-9223372036854775807}"#) { #expect($0.integer("step") == -Int.max) }
        scan(#"{"type":"step","step":9223372036854775808}"#) { #expect($0.integer("step") == nil) }
        scan(#"{"type":"step","step":99999999999999999999999}"#) { #expect($0.integer("step") == nil) }
    }

    @Test func tellsMessageKindsApartAndReadsErrorCodes() {
        scan(#"{"type":"moved","lane":0,"safe":true,"haptic":"move"}"#) { #expect($0.kind == .moved && $0.integer("lane") == 0) }
        scan(#"{"type":"gameOver","gameId":"d7","reason":"crash","score":42}"#) { #expect($0.kind == .gameOver) }
        scan(#"{"type":"error","code":"step_out_of_range","message":"…"}"#) { message in
            #expect(message.kind == .error)
            #expect(message.string("code") == "step_out_of_range")
        }
        scan(#"{"type":"step","step":57,"safeLanes":[]}"#) { #expect($0.laneSet("safeLanes") == 0) }
        scan(#"{"type":"speedUp","interval":540,"stage":1}"#) { #expect($0.kind == .other) }
        scan(#"{"typo":"step"}"#) { #expect($0.kind == .other) }
        scan("") { #expect($0.kind == .other && $0.integer("step") == nil) }
        // "step" inside "stepRevised" must not be read as the key "step".
        scan(#"{"type":"stepRevised","step":13}"#) { message in
            #expect(message.kind == .stepRevised)
            #expect(message.integer("step") == 13)
        }
    }

    @Test func writesMessagesWithoutOverflowing() {
        var bytes = [UInt8](repeating: 0, count: 64)
        let text: String = bytes.withUnsafeMutableBytes { buffer in
            var writer = MessageWriter(buffer.baseAddress!, capacity: 64)
            writer.append("{\"type\":\"move\",\"step\":")
            writer.append(integer: 1_234_567)
            writer.append("}")
            #expect(!writer.overflowed)
            return String(decoding: buffer.prefix(writer.count), as: UTF8.self)
        }
        #expect(text == #"{"type":"move","step":1234567}"#)
        bytes.withUnsafeMutableBytes { buffer in
            var writer = MessageWriter(buffer.baseAddress!, capacity: 8)
            writer.append("0123456789")
            #expect(writer.overflowed && writer.count == 8)
        }
    }

    @Test func botMovesOutOfADangerousLaneWithinTheStep() {
        var bot = LoadBot(behaviour: { var b = LoadBot.Behaviour(); b.missChance = 0; return b }(), seed: 7)
        for _ in 0..<1000 {
            // In the middle lane, only the left lane safe: it must move left, inside 600 ms.
            guard case .move(let direction, let after) = bot.decide(lane: 1, safeLanes: 0b001, intervalMilliseconds: 600) else {
                Issue.record("the bot stayed in a lane with a car coming")
                return
            }
            #expect(direction == .left)
            #expect((150...350).contains(after))
        }
        // At the left edge with only the middle safe: right.
        #expect({ if case .move(.right, _) = bot.decide(lane: 0, safeLanes: 0b010, intervalMilliseconds: 420) { true } else { false } }())
        // The crash step (no safe lane) asks for nothing.
        #expect(bot.decide(lane: 1, safeLanes: 0, intervalMilliseconds: 600) == .stay)
    }

    @Test func botReactionFitsShortSteps() {
        var bot = LoadBot(behaviour: { var b = LoadBot.Behaviour(); b.missChance = 0; return b }(), seed: 3)
        for _ in 0..<200 {
            if case .move(_, let after) = bot.decide(lane: 2, safeLanes: 0b010, intervalMilliseconds: 210) {
                #expect(after <= 170)
            } else {
                Issue.record("no move")
            }
        }
    }

    @Test func botMissesAndWandersAtRoughlyTheAskedRates() {
        var behaviour = LoadBot.Behaviour()
        behaviour.missChance = 0.1
        behaviour.wanderChance = 0.3
        var bot = LoadBot(behaviour: behaviour, seed: 11)
        var misses = 0, wanders = 0
        let trials = 20_000
        for _ in 0..<trials {
            if bot.decide(lane: 1, safeLanes: 0b100, intervalMilliseconds: 600) == .stay { misses += 1 }
            if bot.decide(lane: 1, safeLanes: 0b111, intervalMilliseconds: 600) != .stay { wanders += 1 }
        }
        #expect(abs(Double(misses) / Double(trials) - 0.1) < 0.015)
        #expect(abs(Double(wanders) / Double(trials) - 0.3) < 0.02)
    }

    @Test func percentilesAreNearestRank() {
        let samples: [UInt32] = (1...100).map { UInt32($0 * 1000) }.shuffled()
        let p = Percentiles(microseconds: samples)
        #expect(p.count == 100)
        #expect(p.p50 == 50 && p.p95 == 95 && p.p99 == 99 && p.max == 100)
        let one = Percentiles(microseconds: [2500])
        #expect(one.p50 == 2.5 && one.p99 == 2.5)
        #expect(Percentiles(microseconds: []).p99 == 0)
    }

    @Test func refusesTargetsOffThisMachineAndUnboundedRuns() {
        var options = LoadTestOptions()
        options.tokens = Array(repeating: "t", count: 100)
        #expect(throws: Never.self) { try options.validate() }
        for host in ["10.0.0.1", "example.com", "128.0.0.1", "127.0.0"] {
            var bad = options
            bad.host = host
            #expect(throws: LoadTestError.self) { try bad.validate() }
        }
        var tooMany = options
        tooMany.connections = 20_000
        #expect(throws: LoadTestError.self) { try tooMany.validate() }
        var fewTokens = options
        fewTokens.connections = 101
        #expect(throws: LoadTestError.self) { try fewTokens.validate() }
        var badSource = options
        badSource.sourceAddresses = ["127.0.0.2", "192.168.1.5"]
        #expect(throws: LoadTestError.self) { try badSource.validate() }
        var forever = options
        forever.holdSeconds = 3601
        #expect(throws: LoadTestError.self) { try forever.validate() }
        var bounded = options
        bounded.steps = 0
        #expect(throws: Never.self) { try bounded.validate() }
        bounded.steps = -1
        #expect(throws: LoadTestError.self) { try bounded.validate() }
        bounded.steps = 100_001
        #expect(throws: LoadTestError.self) { try bounded.validate() }
        bounded.steps = 10
        bounded.idle = true  // one game each, and none: contradictory
        #expect(throws: LoadTestError.self) { try bounded.validate() }
    }
}

/// The sampler's per-thread figures: precise enough that a thread which worked a few
/// milliseconds is seen to have worked (clock ticks of 10 ms would often say it did nothing).
@Suite("Process sampler")
struct ProcessSamplerTests {
    @Test func aThreadThatWorkedAFewMillisecondsShowsItsTime() throws {
        let name = "rr-sampler-test"
        let result = ThreadResult()
        let thread = Thread {
            nameCurrentThread(name)
            let pid = getpid()
            let before = ProcessSampler.sample(pid: pid, at: 0)
            let clock = ContinuousClock()
            let start = clock.now
            while clock.now - start < .milliseconds(3) {}  // each lap reads the clock: not optimised away
            let after = ProcessSampler.sample(pid: pid, at: 1_000_000)
            result.store(before: before?.threadSeconds[name], after: after?.threadSeconds[name])
        }
        thread.start()
        let (before, after) = try #require(result.wait())
        let worked = after - before
        #expect(worked >= 0.001, "a 3 ms spin shows at least 1 ms on the CPU, saw \(worked) s")
        #expect(worked < 1, "and not more than the wall time around it, saw \(worked) s")
    }
}

/// Hands the sampling thread's figures to the test, which waits for them.
private final class ThreadResult: @unchecked Sendable {
    private let done = NSCondition()  // guards `figures`
    private var figures: (Double, Double)??

    func store(before: Double?, after: Double?) {
        done.lock()
        figures = .some(before.flatMap { b in after.map { (b, $0) } })
        done.signal()
        done.unlock()
    }

    func wait() -> (Double, Double)? {
        done.lock()
        defer { done.unlock() }
        while figures == nil { done.wait() }
        return figures!
    }
}
