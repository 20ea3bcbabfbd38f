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

    /// The client-message target compares every field the reader knows, and its seeds hold a
    /// valid message of every type and every field with a value (so the fuzzer starts from
    /// each message and field, new ones included), as Foundation reads the seeds.
    @Test func clientMessageChecksAndSeedsCoverEveryTypeAndField() throws {
        #expect(ClientMessageFuzzTarget.uncomparedFields == [], "fields the client-message target does not compare")
        let folder = Self.corpus.appendingPathComponent(ClientMessageFuzzTarget.name).path
        var types: Set<String> = [], fields: Set<String> = []
        for file in FuzzEntry.files(at: folder) {
            let data = try Data(contentsOf: URL(fileURLWithPath: file))
            guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { continue }
            if let type = object["type"] as? String { types.insert(type) }
            fields.formUnion(object.filter { !($0.value is NSNull) }.keys)
        }
        let messageTypes = Set(ClientMessageFuzzTarget.messageTypes)
        #expect(messageTypes.count >= 19)
        #expect(messageTypes.subtracting(types).sorted() == [], "message types with no seed")
        #expect(Set(ClientMessageFuzzTarget.comparedFields).subtracting(fields).sorted() == [], "fields with no seed")
    }

    @Test func everyTargetHasACorpusFolderAndNoFolderIsOrphaned() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpus.path).sorted()
        #expect(folders == Self.targetNames.sorted())
    }
}
