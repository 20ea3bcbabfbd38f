import Foundation
import Testing
import RetroRapidFuzz

/// The seed corpus of every fuzz target (Tests/Fuzz/corpus/<name>/) run through the target's
/// checks in every test run: a regression check of the inputs the fuzzer starts from, without
/// the fuzzer (docs/FUZZING.md). A crash file `make fuzz` finds can be added here to keep it
/// fixed.
@Suite("Fuzz corpus")
struct FuzzCorpusTests {
    static let corpus = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/corpus")

    // A closure, not `\.name`: Swift 6.3's compiler crashes on a key path through a metatype.
    static let targetNames = allFuzzTargets.map { $0.name }

    @Test(arguments: targetNames)
    func everySeedKeepsEveryPropertyAndEveryOutcomeIsSeeded(name: String) throws {
        let target = try #require(allFuzzTargets.first { $0.name == name })
        let files = FuzzEntry.files(at: Self.corpus.appendingPathComponent(name).path)
        #expect(files.count >= 5, "Tests/Fuzz/corpus/\(name) has \(files.count) seeds")
        var reached: Set<String> = []
        for file in files {
            let input = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            do {
                reached.insert(try target.check(input))
            } catch {
                Issue.record("\(file): \(error)")
            }
        }
        // A seed corpus that reaches every outcome starts the fuzzer on every path.
        #expect(reached == target.outcomes, "outcomes the seeds of \(name) do not reach: \(target.outcomes.subtracting(reached))")
    }

    @Test func everyTargetHasACorpusFolderAndNoFolderIsOrphaned() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(folders == Self.targetNames.sorted())
    }
}
